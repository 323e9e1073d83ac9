package gpuradiation

import (
	"fmt"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// The Split variant (radiation.cu's fg_rad_split_solve and
// fg_rad_split_field): per chunk of observers, phase A finds every (observer,
// particle) pair's roots, one thread per pair walking its samples, into a
// scratch of tau and interval per (particle, sample, observer); phase B adds
// the particles' fields per (observer, sample), one thread each. The cube is
// the tiled kernels', bit for bit.

// SplitScratchLimit bounds the Split variant's scratch (bytes; Device.SplitScratch
// overrides it; a quarter of the device's free memory if that is less):
// S x P x (F + int32) per observer, so the default scene (32768 x 256 x 16,
// float64) runs in two chunks of 16384 observers.
const SplitScratchLimit = 1 << 30

// DefaultSplitTile is phase B's samples per block: blocks of 32 observers x
// 8 samples (256 threads; 100 registers in float64 allow 2 such blocks, 16
// warps, per SM, as many as blocks of 128 would), each observer's 8 sums of a
// component written out as 64 contiguous bytes, two whole sectors (as the
// tiled kernels' tiles).
const DefaultSplitTile = 8

// SplitFieldKernel is phase B's entry point for the precision (phase A's is
// EntryPoint(k) + Split).
func SplitFieldKernel(prec kernels.Precision) string {
	return "fg_rad_field_" + suffix(prec) + "_split"
}

// SplitSharedBytes is phase B's dynamic shared memory for tile samples per
// block of 32 observers: the sums (NComp doubles per observer and sample) and
// the observers' indices.
func SplitSharedBytes(tile int) int { return kernels.RadiationComponents*8*32*tile + 4*32 }

// SplitSolveBlock is phase A's block size when Device.BlockSize is 0: of
// 256, 128 and 64 threads the one with the most resident warps per SM
// (phase A is register-limited: 154 registers in float64 Newton reuse fit 3
// blocks of 128, 12 warps, but only one block of 256, 8 warps), the larger
// on ties, halved (down to 32) while there are fewer than two blocks per SM.
func SplitSolveBlock(fn *cuda.Function, threads, sms int) int {
	best, warps := 256, -1
	for _, b := range []int{256, 128, 64} {
		if w := fn.DescribeAt(b, 0).BlocksPerSM * b; w > warps {
			best, warps = b, w
		}
	}
	for best > 32 && (threads+best-1)/best < 2*sms {
		best /= 2
	}
	return best
}

// SplitLaunch is a Split run's shapes: phase A's block (threads), phase B's
// samples per block (blocks of 32 x Tile threads) and dynamic shared memory,
// the observers per chunk and the chunks.
type SplitLaunch struct{ SolveBlock, Tile, Shared, Chunk, Chunks int }

// SplitChunk is the observers per chunk of the Split variant: all o when
// their scratch (perObserver bytes each) fits limit, else the fewest chunks
// that fit, made even, in whole warps (32: scratch rows stay aligned) when
// at least 32 fit, and at least one observer.
func SplitChunk(o, perObserver, limit int) int {
	oc := max(1, limit/max(1, perObserver))
	if oc >= o {
		return max(1, o)
	}
	if oc < 32 {
		return oc
	}
	oc = oc / 32 * 32
	n := (o + oc - 1) / oc
	return min(oc, ((o+n-1)/n+31)/32*32)
}

type splitPlan struct {
	solveBlock, tile, shared int
	oc, chunks, scratch      int
	o, s, p                  int
}

func (sp splitPlan) String() string {
	return fmt.Sprintf("split: solve %d x block %d, field %d x block 32x%d (%d B shared), %d chunk(s) of %d observers, scratch %d MiB",
		(sp.p*sp.oc+sp.solveBlock-1)/sp.solveBlock, sp.solveBlock, (sp.oc+31)/32*((sp.s+sp.tile-1)/sp.tile), sp.tile, sp.shared,
		sp.chunks, sp.oc, sp.scratch>>20)
}

// planSplit picks the launch shapes and the chunk of observers whose scratch
// (S x P x (F + int32) each) fits Device.SplitScratch.
func (d *Device) planSplit(solve *cuda.Function, job *kernels.RadiationJob, fbytes int) (splitPlan, error) {
	sp := splitPlan{tile: d.Tile, o: job.O, s: job.S, p: job.P}
	if sp.tile <= 0 {
		sp.tile = DefaultSplitTile
	}
	sp.shared = SplitSharedBytes(sp.tile)
	if 32*sp.tile > 1024 || sp.shared > 48<<10 {
		return sp, errs.New(errs.Parameter, "split tile %d: 32 x tile threads and %d bytes of shared memory, over 1024 or 48 KiB", sp.tile, sp.shared)
	}
	limit := d.SplitScratch
	if limit <= 0 {
		limit = SplitScratchLimit
		// A quarter of what the device has free at most: on a small GPU the
		// chunks shrink instead of the scratch running it out of memory.
		if free, err := d.b.MemoryFree(); err == nil {
			limit = int(min(int64(limit), free/4))
		}
	}
	per := job.S * job.P * (fbytes + 4)
	sp.oc = SplitChunk(job.O, per, limit)
	sp.chunks = (job.O + sp.oc - 1) / sp.oc
	sp.scratch = sp.oc * per
	if int64(job.P)*int64(sp.oc) >= 1<<31 || int64((sp.oc+31)/32)*int64((job.S+sp.tile-1)/sp.tile) >= 1<<31 {
		return sp, errs.New(errs.Shape, "split: %d observers x %d samples x %d particles per chunk: grid too large", sp.oc, job.S, job.P)
	}
	sp.solveBlock = d.BlockSize
	if sp.solveBlock <= 0 {
		sp.solveBlock = SplitSolveBlock(solve, job.P*sp.oc, d.b.SMs())
	}
	if sp.solveBlock%32 != 0 || sp.solveBlock > 1024 {
		return sp, errs.New(errs.Parameter, "block %d: want a multiple of 32 up to 1024", sp.solveBlock)
	}
	return sp, nil
}
