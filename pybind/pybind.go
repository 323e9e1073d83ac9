// Package pybind is fieldgo's one gopy-wrapped package: the whole bridge between
// Python and the Go runtime.
//
// Its functions take and return handles (int64), numbers, strings and uintptr
// only: no slices, no callbacks (gopy pays a cgo call per slice element). Bulk
// data crosses as Arrow C Data structs whose addresses travel as uintptr. Every
// function recovers panics into errors, formatted "fieldgo[Kind]: message" for
// python/fieldgo/errors.py.
package pybind

import (
	"encoding/json"
	"github.com/fieldgo/fieldgo/errs"
	"runtime"
	"strings"

	"github.com/fieldgo/fieldgo/core"
)

// Version is the version of the Go runtime.
func Version() string { return "0.1.0" }

// AllocatedBytes is the number of bytes of C memory held by fields and their
// exports: 0 once all are released.
func AllocatedBytes() int64 { return core.AllocatedBytes() }

// Goroutines is the number of goroutines alive in the Go runtime (leak tests
// check it returns to its starting value).
func Goroutines() int { return runtime.NumGoroutine() }

// decodeOptions reads an options object sent by the Python package into v,
// refusing a field v does not have: the Python dataclasses mirror the Go
// structs (tests/python/test_bridge_options.py), and a name that reaches Go
// unknown would otherwise be dropped without a word.
func decodeOptions(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errs.New(errs.Parameter, "options: more than one JSON value")
	}
	return nil
}
