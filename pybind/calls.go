package pybind

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/fieldgo/fieldgo/errs"
)

// A call runs one long bridge call on a goroutine while Python's main thread
// waits for it in steps of a few milliseconds (CallWait), so that Ctrl-C
// reaches Python between steps and cancels through the call's own flag. A
// Python thread per call, the alternative, cost its start and Go's
// attachment of a thread it did not create: 1.1 ms a call on a 2-core
// machine.
type call struct {
	done   chan struct{}
	cancel atomic.Bool
	stop   func() // also asks the work to stop (a simulation's own flag), or nil
	result string
	ptr    uintptr
	err    error
}

// startCall runs fn on a goroutine and returns the call's handle; fn sees
// the call's cancel flag, and CallCancel also calls stop when it is not nil.
// A panic in fn becomes the call's error.
func startCall(fn func(cancel *atomic.Bool) (string, uintptr, error), stop func()) int64 {
	c := &call{done: make(chan struct{}), stop: stop}
	go func() {
		defer close(c.done)
		defer func() {
			if r := recover(); r != nil {
				c.err = errs.New(errs.Internal, "panic in fieldgo (please report): %v\n%s", r, debug.Stack())
			}
		}()
		c.result, c.ptr, c.err = fn(&c.cancel)
	}()
	return register(c)
}

// CallWait waits at most ms milliseconds for call h to return and reports
// whether it has.
func CallWait(h int64, ms int) (done bool, err error) {
	defer recoverInto(&err)
	c, err := lookup[*call](h)
	if err != nil {
		return false, bridge(err)
	}
	select {
	case <-c.done: // no timer for a call that has returned
		return true, nil
	default:
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.done:
		return true, nil
	case <-t.C:
		return false, nil
	}
}

// CallCancel asks call h to stop; it then returns CancelledError.
func CallCancel(h int64) (err error) {
	defer recoverInto(&err)
	c, err := lookup[*call](h)
	if err != nil {
		return bridge(err)
	}
	c.cancel.Store(true)
	if c.stop != nil {
		c.stop()
	}
	return nil
}

// finish releases the handle of a call that has returned and gives back
// what it returned.
func finish(h int64) (*call, error) {
	c, err := lookup[*call](h)
	if err != nil {
		return nil, err
	}
	select {
	case <-c.done:
	default:
		return nil, errs.New(errs.Internal, "call %d has not returned (wait for it with CallWait)", h)
	}
	if _, err := unregister(h); err != nil {
		return nil, err
	}
	return c, c.err
}

// CallResult releases call h, which has returned, and gives its text
// result or its error.
func CallResult(h int64) (result string, err error) {
	defer recoverInto(&err)
	c, err := finish(h)
	if err != nil {
		return "", bridge(err)
	}
	return c.result, nil
}

// CallResultPointer releases call h, which has returned, and gives its
// pointer result (a pair block) or its error.
func CallResultPointer(h int64) (p uintptr, err error) {
	defer recoverInto(&err)
	c, err := finish(h)
	if err != nil {
		return 0, bridge(err)
	}
	return c.ptr, nil
}

// SimAdvanceStart runs the current flow for about budgetMs milliseconds of
// wall time (0: to its end) and at most maxSteps steps (0: no limit) as a
// call: its result (CallResult) is the flow's progress JSON; CallCancel stops
// the flow at the next kernel boundary (CancelledError), and the flow can be
// advanced again.
func SimAdvanceStart(h int64, budgetMs, maxSteps int) (c int64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	return startCall(func(*atomic.Bool) (string, uintptr, error) {
		p, err := s.Advance(maxSteps, time.Duration(budgetMs)*time.Millisecond)
		if err != nil {
			return "", 0, err
		}
		return progressJSON(p), 0, nil
	}, s.Cancel), nil
}

// SimAdvanceEvolveStart runs the current evolution as SimAdvanceStart runs a
// flow; its result is the evolution's progress JSON: step, steps, t, energy,
// done, dt.
func SimAdvanceEvolveStart(h int64, budgetMs, maxSteps int) (c int64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	return startCall(func(*atomic.Bool) (string, uintptr, error) {
		p, err := s.AdvanceEvolve(maxSteps, time.Duration(budgetMs)*time.Millisecond)
		if err != nil {
			return "", 0, err
		}
		return evolveProgressJSON(p, s.EvolveDt()), 0, nil
	}, s.Cancel), nil
}
