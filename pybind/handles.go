package pybind

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/fieldgo/fieldgo/errs"
)

// handles maps the integers Python holds onto Go objects. Handles are never
// reused, so a stale handle is reported instead of reaching another object.
var handles = struct {
	sync.Mutex
	next int64
	objs map[int64]any
}{objs: map[int64]any{}}

func register(obj any) int64 {
	handles.Lock()
	defer handles.Unlock()
	handles.next++
	handles.objs[handles.next] = obj
	return handles.next
}

func lookup[T any](h int64) (T, error) {
	handles.Lock()
	obj, ok := handles.objs[h]
	handles.Unlock()
	var zero T
	if !ok {
		return zero, errs.New(errs.Released, "handle %d is released or was never made", h)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, errs.New(errs.Handle, "handle %d is a %T, not a %T", h, obj, zero)
	}
	return t, nil
}

func unregister(h int64) (any, error) {
	handles.Lock()
	defer handles.Unlock()
	obj, ok := handles.objs[h]
	if !ok {
		return nil, errs.New(errs.Released, "handle %d is already released", h)
	}
	delete(handles.objs, h)
	return obj, nil
}

// LiveHandles is the number of Go objects Python currently holds.
func LiveHandles() int { handles.Lock(); defer handles.Unlock(); return len(handles.objs) }

// bridge turns err into the string form Python parses ("fieldgo[Kind]: msg").
func bridge(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(errs.Bridge(err))
}

// recoverInto turns a panic into an InternalError so that it never kills the
// Python process. Every exported function defers it.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = bridge(errs.New(errs.Internal, "panic in fieldgo (please report): %v\n%s", r, debug.Stack()))
	}
}

var _ = fmt.Sprintf
