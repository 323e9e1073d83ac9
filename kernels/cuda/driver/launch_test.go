package driver

import (
	"reflect"
	"strings"
	"testing"
)

type testBlock struct {
	A int64 `c:"a"`
}

type testParams struct {
	P DevicePtr `c:"p"`
	N int32     `c:"n"`
	X float64   `c:"x"`
}

var (
	_ = Register[testBlock](Block, "fg_test_block")
	_ = Register[testParams](Params, "fg_test_params")
	_ = RegisterMatching[testParams](Params, `fg_test_family_\d+`)
)

// TestLaunchRefusesOtherTypes: Launch checks the argument type registered
// for the kernel before it reaches the driver (no GPU needed: a refused
// launch never calls it).
func TestLaunchRefusesOtherTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		args any
		want string
	}{
		{"fg_test_block", &testParams{}, "takes *driver.testBlock"},
		{"fg_test_block", testBlock{}, "takes *driver.testBlock"},
		{"fg_test_block", (*testBlock)(nil), "takes *driver.testBlock"},
		{"fg_test_params", &testBlock{}, "takes *driver.testParams"},
		{"fg_test_family_12", &testBlock{}, "takes *driver.testParams"},
		{"fg_test_unknown", &testBlock{}, "no registered argument type"},
		{"fg_test_block", &testBlock{}, "no function loaded"}, // the right type, no module
	} {
		err := Launch(Function{name: c.name}, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, Stream{}, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %T: want %q, got %v", c.name, c.args, c.want, err)
		}
	}
}

// TestRegistry: exact names before patterns, patterns matched whole, the
// offsets of a parameter list.
func TestRegistry(t *testing.T) {
	at, ok := Lookup("fg_test_family_3")
	if !ok || at.Type != reflect.TypeFor[testParams]() || at.Kind != Params {
		t.Fatalf("fg_test_family_3: %+v %v", at, ok)
	}
	if _, ok := Lookup("fg_test_family_3x"); ok {
		t.Fatal("a pattern matched part of a name")
	}
	if got := at.offs; !reflect.DeepEqual(got, []int64{0, 8, 16}) {
		t.Fatalf("offsets %v", got)
	}
	if at, _ := Lookup("fg_test_block"); at.Kind != Block || at.offs != nil {
		t.Fatalf("fg_test_block: %+v", at)
	}
}
