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
		{"null pairs", func() error { _, err := RadiationFields(0, 0, 0, 0, 1, ""); return err }(), "FormatError"},
		{"bad options", func() error { _, err := RadiationFields(0, 0, 0, 0, 1, "{"); return err }(), "ParameterError"},
		{"bad method", func() error { _, err := RadiationFields(0, 0, 0, 0, 1, `{"method":"euler"}`); return err }(), "ParameterError"},
		{"unknown job", func() error { _, err := RadiationFields(1<<40, 0, 0, 0, 1, ""); return err }(), "ReleasedError"},
		{"empty info pair", func() error { p := NewArrowPair(); defer FreeArrowPair(p); _, err := TrajectoryInfo(p, 0); return err }(), "FormatError"},
		{"lab time null", func() error { _, err := TrajectoryFromLabTime(0, "", 1, "1", "1"); return err }(), "FormatError"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "fieldgo["+c.kind+"]") {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.kind)
		}
	}
	job := RadiationNewJob()
	if err := RadiationCancel(job); err != nil {
		t.Fatal(err)
	}
	if err := RadiationReleaseJob(job); err != nil {
		t.Fatal(err)
	}
	if err := RadiationReleaseJob(job); err == nil {
		t.Fatal("released a job twice")
	}
}
