package gpuradiation

import (
	"testing"
	"unsafe"
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

// TestArgsLayout: args[F] keeps fg_rad_args<F>'s layout (the offsets the
// hand-written float64 and float32 mirrors had: C after 4 bytes of padding
// in float64, right after S in float32).
func TestArgsLayout(t *testing.T) {
	var d args[float64]
	var f args[float32]
	got := [8]uintptr{unsafe.Sizeof(d), unsafe.Offsetof(d.C), unsafe.Offsetof(d.NIters), unsafe.Offsetof(d.O0),
		unsafe.Sizeof(f), unsafe.Offsetof(f.C), unsafe.Offsetof(f.NIters), unsafe.Offsetof(f.O0)}
	if want := [8]uintptr{248, 152, 160, 240, 240, 148, 152, 232}; got != want {
		t.Errorf("args layout %v, want %v", got, want)
	}
}

// TestSegmentFor: segments only when the observers alone leave the target
// warps unfilled, never shorter than MinSegment, a multiple of DefaultTile,
// and covering the samples with at most the segments the target asks for.
func TestSegmentFor(t *testing.T) {
	for _, c := range []struct{ sms, o, s, want int }{
		{132, 32768, 256, 128},  // the benchmark's scene on the H200: two segments
		{132, 524288, 256, 256}, // fills the GPU alone: the whole walk
		{132, 67584, 256, 256},  // exactly the target
		{132, 1000, 256, 32},    // capped by MinSegment: 8 segments
		{132, 1, 1000000, 32},   // one observer's long series: 31250 segments
		{132, 1, 40, 40},        // too short to cut
		{132, 20000, 100, 40},   // 3 segments asked: 34 samples, rounded up to 40 (40, 40, 20)
		{1, 100, 1000, 200},     // 5 segments of 200
	} {
		got := SegmentFor(c.sms, c.o, c.s)
		if got != c.want {
			t.Errorf("SegmentFor(%d, %d, %d) = %d, want %d", c.sms, c.o, c.s, got, c.want)
		}
	}
	for sms := 1; sms <= 200; sms += 13 {
		for _, o := range []int{1, 7, 100, 4096, 70000} {
			for _, s := range []int{1, 31, 32, 64, 100, 257, 5000} {
				seg := SegmentFor(sms, o, s)
				n := (s + seg - 1) / seg
				target := max(1, sms*TargetWarpsPerSM*32/o)
				switch {
				case seg == s:
				case seg%DefaultTile != 0 || seg < MinSegment || seg > s:
					t.Errorf("SegmentFor(%d, %d, %d) = %d: not a multiple of %d in [%d, S]", sms, o, s, seg, DefaultTile, MinSegment)
				case n > target || n < 2:
					t.Errorf("SegmentFor(%d, %d, %d) = %d: %d segments, target %d", sms, o, s, seg, n, target)
				}
			}
		}
	}
}
