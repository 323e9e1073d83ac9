package pybind

import (
	"strings"
	"testing"
)

// Bad arguments across the bridge are typed errors, never panics.
func TestRadiationBridgeErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		kind string
	}{
		{"null pairs", radiationError(0, 0, 0, 1, ""), "FormatError"},
		{"bad options", radiationError(0, 0, 0, 1, "{"), "ParameterError"},
		{"bad method", radiationError(0, 0, 0, 1, `{"method":"euler"}`), "ParameterError"},
		{"unknown call", func() error { _, err := CallWait(1<<40, 1); return err }(), "ReleasedError"},
		{"empty info pair", func() error { p := NewArrowPair(); defer FreeArrowPair(p); _, err := TrajectoryInfo(p, 0); return err }(), "FormatError"},
		{"lab time null", func() error { _, err := TrajectoryFromLabTime(0, "", 1, "1", "1"); return err }(), "FormatError"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "fieldgo["+c.kind+"]") {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.kind)
		}
	}
	// A call's handle is released by its result, once.
	h, err := RadiationFieldsStart(0, 0, 0, 1, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := CallCancel(h); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, err = CallWait(h, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CallResultPointer(h); err == nil {
		t.Fatal("a call on null pairs succeeded")
	}
	if _, err := CallResultPointer(h); err == nil || !strings.Contains(err.Error(), "ReleasedError") {
		t.Fatalf("a call's result taken twice: %v", err)
	}
}

// radiationError runs a radiation call to its end and returns its error.
func radiationError(traj, obs, times uintptr, nsamples int, options string) error {
	h, err := RadiationFieldsStart(traj, obs, times, nsamples, options, false)
	if err != nil {
		return err
	}
	for done := false; !done; {
		if done, err = CallWait(h, 10); err != nil {
			return err
		}
	}
	_, err = CallResultPointer(h)
	return err
}
