package pybind

import (
	"sort"
	"strings"
	"sync"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/core/nbody"
	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/gpunbody"
	"github.com/fieldgo/fieldgo/kernels/cuda/gpuradiation"
)

// backendOptions are the choices Python passes as JSON.
type backendOptions struct {
	Backend string `json:"backend"` // "auto", "cpu" or "cuda"
	Threads int    `json:"threads"` // CPU goroutines; 0: GOMAXPROCS
}

// gpu is the process's one CUDA backend (it holds the device's primary
// context), probed once: when the driver, NVRTC or a device is missing, the
// reason is kept and "auto" falls back to the CPU.
var gpu struct {
	once sync.Once
	b    *cuda.Backend
	err  error
}

func cudaBackend() (kernels.Backend, error) {
	gpu.once.Do(func() {
		defer recoverInto(&gpu.err) // a probe in WarmBackend's goroutine must not take the process down
		gpu.b, gpu.err = cuda.New(cuda.Options{})
	})
	if gpu.err != nil {
		return nil, errs.Wrap(errs.Backend, gpu.err, "the CUDA backend is unavailable")
	}
	return gpu.b, nil
}

// WarmBackend starts the CUDA probe (driver, device, primary context, NVRTC:
// ~0.2 s on an H200) in the background and returns at once, so that it runs
// while Python traces the theory of the Simulation being made; the
// Simulation then waits for it (cudaBackend's once). Nothing for "cpu".
func WarmBackend(kind string) {
	if kind == "cpu" {
		return
	}
	go func() { _, _ = cudaBackend() }()
}

// Devices describes the backends this process can use, as JSON: the CPU
// always; CUDA with its device and architecture, or why it is unavailable.
func Devices() (info string, err error) {
	defer recoverInto(&err)
	d := map[string]any{"cpu": map[string]any{"available": true}}
	if _, e := cudaBackend(); e != nil {
		d["cuda"] = map[string]any{"available": false, "reason": e.Error()}
	} else {
		d["cuda"] = map[string]any{"available": true, "device": gpu.b.Device(), "arch": gpu.b.Arch()}
	}
	return jsonString(d), nil
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

// gpuDevice is one of the trajectory workloads' GPU devices, made once per
// process on the CUDA backend (its module compiles on first use and stays
// loaded).
type gpuDevice[D any] struct {
	once sync.Once
	dev  D
	err  error
	make func(*cuda.Backend) (D, error)
	what string
}

// get resolves a backend name: ok=false means the CPU ("cpu", or "auto"
// without a usable GPU); "cuda" without one is an error that says why.
func (g *gpuDevice[D]) get(backend string) (dev D, ok bool, err error) {
	switch backend {
	case "", "auto", "cpu", "cuda", "gpu":
	default:
		return dev, false, errs.New(errs.Backend, "unknown backend %q: use \"auto\", \"cpu\" or \"cuda\"", backend)
	}
	if backend == "cpu" {
		return dev, false, nil
	}
	g.once.Do(func() {
		if _, err := cudaBackend(); err != nil {
			g.err = err
			return
		}
		g.dev, g.err = g.make(gpu.b)
	})
	if g.err != nil {
		if backend == "auto" || backend == "" {
			return dev, false, nil
		}
		return dev, false, errs.Wrap(errs.Backend, g.err, "the %s GPU path is unavailable", g.what)
	}
	return g.dev, true, nil
}

var (
	nbodyGPU     = gpuDevice[*gpunbody.Device]{make: gpunbody.New, what: "N-body"}
	radiationGPU = gpuDevice[*gpuradiation.Device]{make: gpuradiation.New, what: "radiation"}
)

// nbodyDevice resolves a backend name for N-body: nil means the CPU.
func nbodyDevice(backend string) (nbody.Device, error) {
	d, ok, err := nbodyGPU.get(backend)
	if !ok {
		return nil, err
	}
	return d, nil
}

// radiationDevice resolves a backend name for radiation: nil means the CPU.
func radiationDevice(backend string) (radiation.Device, error) {
	d, ok, err := radiationGPU.get(backend)
	if !ok {
		return nil, err
	}
	return d, nil
}

// DeviceMemoryInUse is the GPU memory in use (bytes), or -1 without a GPU.
func DeviceMemoryInUse() (n int64, err error) {
	defer recoverInto(&err)
	if _, e := cudaBackend(); e != nil {
		return -1, nil
	}
	n, err = gpu.b.MemoryInUse()
	return n, bridge(err)
}

// KernelResources compiles a theory's CUDA kernels with NVRTC for arch
// ("sm_90"; no GPU needed, only NVRTC) with buffers stored in precision
// ("float64" or "float32") and returns JSON: for each kernel its registers,
// spill bytes, and the register budget it must keep
// (kernels/cuda/budgets.go), so tests can hold every built-in theory to the
// budget table in both precisions. A theory with z derivatives compiles the
// grid unit, the only one that runs it (cuda.TranslationUnitGridAs).
func KernelResources(spec, source, arch, precision string) (info string, err error) {
	defer recoverInto(&err)
	th, err := core.ParseTheory(spec, source)
	if err != nil {
		return "", bridge(err)
	}
	prec, err := cuda.ParsePrecision(precision)
	if err != nil {
		return "", bridge(err)
	}
	unit := cuda.TranslationUnitAs(th.Unit(), prec)
	if th.ThreeD() {
		unit = cuda.TranslationUnitGridAs(th.Unit(), prec)
	}
	_, log, err := cuda.CompileCUBIN(unit, arch)
	if err != nil {
		return "", bridge(err)
	}
	report := cuda.ParsePtxasLog(log)
	if len(report) == 0 {
		return "", bridge(errs.New(errs.Backend, "NVRTC compiled for %s but its ptxas report lists no kernel", arch))
	}
	rows := resourceRows(report, prec, th.Spec.Name)
	return jsonString(rows), nil
}

// resourceRow is one kernel of KernelResources' report.
type resourceRow struct {
	Kernel      string `json:"kernel"`
	Registers   int    `json:"registers"`
	SpillStores int    `json:"spill_stores"`
	SpillLoads  int    `json:"spill_loads"`
	Budget      int    `json:"budget"`
	SpillBudget int    `json:"spill_budget"` // bytes of stores and of loads each (cuda.SpillAllowance)
}

// resourceRows are the theory's kernels of a ptxas report with their
// budgets, by name; the empty kernel that made NVRTC skip the driver's
// compute cache (cuda.UncachedEntry) is not the theory's.
func resourceRows(report map[string]cuda.Resources, prec cuda.Precision, theory string) []resourceRow {
	var rows []resourceRow
	for name, r := range report {
		if strings.HasPrefix(name, cuda.UncachedEntry) {
			continue
		}
		rows = append(rows, resourceRow{name, r.Registers, r.SpillStores, r.SpillLoads, cuda.BudgetAs(name, prec, theory),
			cuda.SpillAllowance(name, prec, theory)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Kernel < rows[j].Kernel })
	return rows
}
