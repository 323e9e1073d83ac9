package cuda

/*
#include "api.h"
#include "cuda_args.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// tileShape is a launch shape of fg_k_tile: blocks of 32 x BY threads, each
// thread RPT sites a column apart by BY rows, so a tile is 32 x BY*RPT sites.
type tileShape struct {
	BY  int `json:"by"`
	RPT int `json:"rows_per_thread"`
}

// defaultTile is used before tuning and when tuning is impossible.
var defaultTile = tileShape{BY: 8, RPT: 2}

// tileCandidates are the shapes the autotune times, besides the one the
// occupancy API suggests. Taller tiles re-read less halo (a 32 x TY tile
// loads 36 x (TY+4) values), more rows per thread keep fewer threads.
var tileCandidates = []tileShape{{8, 1}, {8, 2}, {8, 4}, {4, 4}, {4, 8}, {16, 1}, {16, 2}}

// smem is the dynamic shared memory of the tile for ncomp components.
func (s tileShape) smem(ncomp int) int { return 8 * ncomp * (s.BY*s.RPT + 4) * (C.FG_CHUNK + 4) }

// maxDynShared is what a kernel may take without opting in.
const maxDynShared = 48 << 10

// sizeClass buckets a grid by the powers of two above its sides: shapes are
// tuned once per bucket.
func sizeClass(g kernels.Grid) string {
	return fmt.Sprintf("%dx%d", 1<<bits.Len(uint(g.Nx-1)), 1<<bits.Len(uint(g.Ny-1)))
}

// tunePath is the autotune cache beside the CUBIN cache: one JSON file per
// GPU model and kernel hash (the CUBIN key covers source, options,
// architecture, NVRTC and driver), mapping size class to shape.
func (p *Program) tunePath() string {
	if p.dir == "" || p.key == "" {
		return ""
	}
	h := sha256.Sum256([]byte(p.b.name))
	return filepath.Join(p.dir, p.key+"-"+hex.EncodeToString(h[:6])+".tune.json")
}

func (p *Program) readTunes() {
	p.tilesRead = true
	if p.tiles == nil {
		p.tiles = map[string]tileShape{}
	}
	path := p.tunePath()
	if path == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var m map[string]tileShape
	if json.Unmarshal(data, &m) != nil {
		return
	}
	for k, v := range m {
		if p.validTile(v) {
			p.tiles[k] = v
		}
	}
}

func (p *Program) writeTunes() {
	path := p.tunePath()
	if path == "" {
		return
	}
	data, err := json.MarshalIndent(p.tiles, "", " ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = writeAtomic(path, data)
	}
}

// validTile says whether the loaded kernel can launch shape s.
func (p *Program) validTile(s tileShape) bool { return p.validTileOf("fg_k_tile", s) }

// validTileOf says whether the loaded tile kernel name (fg_k_tile or
// fg_k_tile_up) can launch shape s.
func (p *Program) validTileOf(name string, s tileShape) bool {
	if s.BY <= 0 || s.RPT <= 0 || 32*s.BY > 1024 || s.smem(p.unit.NComp) > maxDynShared {
		return false
	}
	k := p.k[name]
	var maxT C.int
	C.fg_cuFuncGetAttribute(&maxT, C.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.fn)
	if 32*s.BY > int(maxT) {
		return false
	}
	var nb C.int
	C.fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k.fn, C.int(32*s.BY), C.size_t(s.smem(p.unit.NComp)))
	return nb > 0
}

// launchTile launches fg_k_tile over a's grid with shape s on stream st
// (nil: the default stream).
func (p *Program) launchTile(a *C.fg_cargs, s tileShape, st C.CUstream) error {
	a.rpt = C.int(s.RPT)
	ty := s.BY * s.RPT
	grid := int(a.nchunk) * ((int(a.ny) + ty - 1) / ty)
	k := p.k["fg_k_tile"]
	return check(C.fg_cuLaunch(k.fn, C.uint(grid), 32, C.uint(s.BY), C.uint(s.smem(p.unit.NComp)), st, unsafe.Pointer(a)), "launch fg_k_tile")
}

// tileFor returns the shape for a's grid: from memory, the disk cache or a
// short autotune that times every candidate on a's own buffers (it writes
// a.out and the partials, which the real launch then overwrites). Called with
// the context current and p.mu held.
func (p *Program) tileFor(a *C.fg_cargs, g kernels.Grid) (tileShape, error) {
	if !p.tilesRead {
		p.readTunes()
	}
	class := sizeClass(g)
	if s, ok := p.tiles[class]; ok {
		p.setTileInfo(s)
		return s, nil
	}
	cands := append([]tileShape(nil), tileCandidates...)
	// The occupancy API's block size for the default tile's shared memory.
	k := p.k["fg_k_tile"]
	var minGrid, block C.int
	if C.fg_cuOccupancyMaxPotentialBlockSize(&minGrid, &block, k.fn, C.size_t(defaultTile.smem(p.unit.NComp)), 0) == C.CUDA_SUCCESS {
		by := int(block) / 32
		if by > 0 {
			cands = append(cands, tileShape{BY: by, RPT: 1}, tileShape{BY: by, RPT: 2})
		}
	}
	t := *a
	t.ctl, t.stage = 0, 0
	var ev [2]C.CUevent
	for i := range ev {
		if err := check(C.fg_cuEventCreate(&ev[i], 0), "cuEventCreate"); err != nil {
			return defaultTile, err
		}
		defer C.fg_cuEventDestroy(ev[i])
	}
	best, bestMs := defaultTile, float32(-1)
	var report []string
	seen := map[tileShape]bool{}
	for _, s := range cands {
		if seen[s] || !p.validTile(s) {
			continue
		}
		seen[s] = true
		if err := p.launchTile(&t, s, nil); err != nil { // warm-up
			continue
		}
		const reps = 3
		C.fg_cuEventRecord(ev[0], nil)
		for r := 0; r < reps; r++ {
			if err := p.launchTile(&t, s, nil); err != nil {
				return defaultTile, err
			}
		}
		C.fg_cuEventRecord(ev[1], nil)
		if err := check(C.fg_cuEventSynchronize(ev[1]), "cuEventSynchronize"); err != nil {
			return defaultTile, err
		}
		var ms C.float
		C.fg_cuEventElapsedTime(&ms, ev[0], ev[1])
		m := float32(ms) / reps
		report = append(report, fmt.Sprintf("32x%d/%d: %.1f us", s.BY, s.RPT, 1e3*m))
		if bestMs < 0 || m < bestMs {
			best, bestMs = s, m
		}
	}
	if bestMs < 0 {
		return defaultTile, errs.New(errs.Backend, "fg_k_tile: no launchable tile shape")
	}
	sort.Strings(report)
	p.tuneReport = append(p.tuneReport, fmt.Sprintf("%s: chose 32x%d/%d of [%s]", class, best.BY, best.RPT, joinStrings(report, ", ")))
	p.tiles[class] = best
	p.writeTunes()
	p.setTileInfo(best)
	return best, nil
}

func (p *Program) setTileInfo(s tileShape) {
	k := p.k["fg_k_tile"]
	k.info.BlockSize, k.info.BlockY, k.info.TileRows = 32*s.BY, s.BY, s.RPT
	k.info.DynShared = s.smem(p.unit.NComp)
	var nb C.int
	C.fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k.fn, C.int(32*s.BY), C.size_t(k.info.DynShared))
	k.info.BlocksPerSM = int(nb)
	if p.b.maxTPM > 0 {
		k.info.Occupancy = float64(int(nb)*32*s.BY) / float64(p.b.maxTPM)
	}
}

// TuneReport lists the autotune's timings, one line per size class tuned in
// this process.
func (p *Program) TuneReport() []string { return append([]string(nil), p.tuneReport...) }

func joinStrings(s []string, sep string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += sep
		}
		out += x
	}
	return out
}
