package gpuradiation

import (
	"testing"
)

// TestSplitChunk: the Split variant's observer chunks fit the scratch limit,
// in whole warps when they can, and cover every observer.
func TestSplitChunk(t *testing.T) {
	per := 256 * 16 * 12 // S x P x (float64 + int32)
	for _, c := range []struct{ o, per, limit, want int }{
		{32768, per, SplitScratchLimit, 16384},        // the benchmark's scene: two chunks
		{1000, 256 * 3 * 12, 300 * 256 * 3 * 12, 256}, // 4 chunks of at most 288: 250 each, in warps
		{1000, 256 * 3 * 12, 100 * 256 * 3 * 12, 96},
		{1000, 256 * 3 * 12, 1 << 30, 1000},
		{1000, 100, 31 * 100, 31},   // fewer than a warp fit: no rounding
		{1000, 1 << 31, 1 << 30, 1}, // not even one fits: one at a time
		{5, 10, 1 << 30, 5},
	} {
		got := SplitChunk(c.o, c.per, c.limit)
		if got != c.want {
			t.Errorf("SplitChunk(%d, %d, %d) = %d, want %d", c.o, c.per, c.limit, got, c.want)
		}
		if got > 1 && got*c.per > c.limit {
			t.Errorf("SplitChunk(%d, %d, %d) = %d: %d bytes over the limit", c.o, c.per, c.limit, got, got*c.per)
		}
	}
}
