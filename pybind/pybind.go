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
	"runtime"

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
