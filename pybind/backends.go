package pybind

import (
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// backendOptions are the choices Python passes as JSON.
type backendOptions struct {
	Backend string `json:"backend"` // "auto", "cpu" or "cuda"
	Threads int    `json:"threads"` // CPU goroutines; 0: GOMAXPROCS
}

// cudaBackend returns the CUDA backend, or why there is none. Replaced by
// the real probe when kernels/cuda is wired in.
var cudaBackend = func() (kernels.Backend, error) {
	return nil, errs.New(errs.Backend, "this build of fieldgo has no CUDA backend")
}

// selectBackend picks the backend: "auto" takes CUDA when it is usable and
// falls back to the CPU, saying why in the returned note.
func selectBackend(o backendOptions) (b kernels.Backend, note string, err error) {
	switch o.Backend {
	case "", "auto":
		if b, err := cudaBackend(); err == nil {
			return b, "", nil
		} else {
			note = "cuda unavailable: " + err.Error()
		}
		return cpu.New(cpu.Options{Threads: o.Threads}), note, nil
	case "cpu":
		return cpu.New(cpu.Options{Threads: o.Threads}), "", nil
	case "cuda":
		b, err := cudaBackend()
		return b, "", err
	}
	return nil, "", errs.New(errs.Backend, "unknown backend %q: use \"auto\", \"cpu\" or \"cuda\"", o.Backend)
}
