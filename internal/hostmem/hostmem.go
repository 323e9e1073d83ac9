// Package hostmem is fieldgo's host memory: the C allocator behind every bulk
// buffer (fields, trajectories, splines, radiation cubes, N-body state), the
// count of what it holds, and a parallel clear for large blocks.
//
// It is a leaf (arrow-go's mallocator only) so that core, the workloads
// (core/nbody, core/radiation, core/spline, core/trajectory) and the device
// adapters (kernels/cuda/gpuradiation) share one allocator without importing
// each other. core.Allocator is this Allocator.
package hostmem

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

// Allocator is the C allocator behind every bulk buffer fieldgo creates. C
// memory (not the Go heap) can cross cgo, be seen by Python and be copied to a
// device.
var Allocator = mallocator.NewMallocator()

// AllocatedBytes is the number of bytes Allocator currently holds: 0 once every
// buffer and every export of one has been released.
func AllocatedBytes() int64 { return Allocator.AllocatedBytes() }

// ClearParallel zeroes b with up to workers goroutines (0: GOMAXPROCS; chunks
// of at least 4 MiB). A fresh C buffer's pages are faulted in on first touch,
// about 0.4 ms per MiB on one core: a radiation cube of 671 MiB took 0.45 s of
// a 0.62 s fields() call on the GPU to clear on one core (docs/performance/radiation.md),
// and the device's download into untouched pages is no faster.
func ClearParallel(b []byte, workers int) {
	const minChunk = 4 << 20
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, (len(b)+minChunk-1)/minChunk)
	if workers <= 1 {
		clear(b)
		return
	}
	chunk := (len(b) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(b); lo += chunk {
		wg.Add(1)
		go func(s []byte) {
			defer wg.Done()
			clear(s)
		}(b[lo:min(lo+chunk, len(b))])
	}
	wg.Wait()
}
