package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, whatever n and grain, and small
// loops stay on the caller's goroutine.
func TestForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 1000, 4097} {
		for _, grain := range []int{0, 1, 3, 64, 5000} {
			seen := make([]int32, n)
			calls := int32(0)
			For(n, grain, func(lo, hi int) {
				atomic.AddInt32(&calls, 1)
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&seen[i], 1)
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n=%d grain=%d: index %d visited %d times", n, grain, i, c)
				}
			}
			if want := min(runtime.GOMAXPROCS(0), n/max(1, grain)); n > 0 && want > 1 && int(calls) != want {
				t.Fatalf("n=%d grain=%d: %d ranges, want %d", n, grain, calls, want)
			}
		}
	}
}
