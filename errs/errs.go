// Package errs defines the typed errors that cross the Python bridge.
//
// Every error fieldgo reports carries a Kind; pybind formats it as
// "fieldgo[Kind]: message" and the Python package maps Kind onto its exception
// hierarchy rooted at fieldgo.Error.
package errs

import (
	"errors"
	"fmt"
)

// Kind names a class of error. The strings are part of the bridge contract
// (python/fieldgo/errors.py maps them); do not rename them.
type Kind string

const (
	Lattice    Kind = "LatticeError"    // bad grid size, spacing, boundary
	Shape      Kind = "ShapeError"      // array shape/length does not fit the lattice
	Layout     Kind = "LayoutError"     // dtype, contiguity, nulls: memory cannot be shared
	Parameter  Kind = "ParameterError"  // NaN/unknown/missing parameter values
	Released   Kind = "ReleasedError"   // use of a released object or handle
	Handle     Kind = "HandleError"     // unknown handle
	Spec       Kind = "SpecError"       // malformed theory spec handed across the bridge
	Compile    Kind = "CompileError"    // a kernel failed to compile
	Backend    Kind = "BackendError"    // no compiler, no GPU, driver failure
	Divergence Kind = "DivergenceError" // a flow blew up (NaN/Inf)
	Cancelled  Kind = "CancelledError"  // a long call was cancelled
	Format     Kind = "FormatError"     // a file or Arrow stream is malformed
	Internal   Kind = "InternalError"   // a recovered panic: a bug in fieldgo
	Trajectory Kind = "TrajectoryError" // a trajectory table or spline is malformed (unsorted, non-finite, too short, u.u != c^2, other knots)
	StepSize   Kind = "StepSizeError"   // an adaptive evolution's step fell below its floor (Python: a DivergenceError)
)

// Error is an error with a Kind.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // optional wrapped cause
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the given kind with a formatted message.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind wrapping err, prefixed by a message.
func Wrap(k Kind, err error, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...) + ": " + err.Error(), Err: err}
}

// KindOf returns the Kind of err, or Internal if it carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err has kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Bridge formats err for the Python side: "fieldgo[Kind]: message".
func Bridge(err error) string {
	return fmt.Sprintf("fieldgo[%s]: %s", KindOf(err), err.Error())
}
