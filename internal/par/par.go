// Package par runs a loop's index ranges on the machine's cores: the host-side
// preparation of a GPU call (splines, knot records, observer arrays) is
// elementwise work that would otherwise run on one core while the GPU waits.
package par

import (
	"runtime"
	"sync"
)

// For calls f(lo, hi) on disjoint ranges covering 0 .. n-1, concurrently
// when n is at least 2*grain (each range then holds at least grain items),
// on at most GOMAXPROCS goroutines. f must only write what its range owns;
// every item is computed as it would be in one loop, so results do not
// depend on the split.
func For(n, grain int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n/max(1, grain))
	if w <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
