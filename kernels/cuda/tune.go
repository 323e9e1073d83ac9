package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/diskcache"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
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
// loads 36 x (TY+4) values), more rows per thread keep fewer threads, and
// small blocks give the register-heavy kernels finer occupancy steps.
var tileCandidates = []tileShape{{8, 1}, {8, 2}, {8, 4}, {4, 2}, {4, 4}, {4, 8}, {2, 8}, {2, 16}, {16, 1}, {16, 2}}

// smem is the dynamic shared memory of the tile for ncomp components.
func (s tileShape) smem(ncomp int) int { return 8 * ncomp * (s.BY*s.RPT + 4) * (chunk + 4) }

// tileSmem is the dynamic shared memory of tile kernel name at shape s:
// the tile with its 2-site halo, or for fg_k_stages234 its three planes
// (the tile with a 4-site halo, g1 on the tile with a 2-site halo, g2 on
// the tile; cuda_flow.cu).
func (p *Program) tileSmem(name string, s tileShape) int {
	if name == "fg_k_stages234" {
		ty := s.BY * s.RPT
		return 8 * p.unit.NComp * ((ty+8)*(chunk+8) + (ty+4)*(chunk+4) + ty*chunk)
	}
	return s.smem(p.unit.NComp)
}

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
		_ = diskcache.WriteAtomic(path, data)
	}
}

// validTile says whether the loaded kernel can launch shape s.
func (p *Program) validTile(s tileShape) bool { return p.validTileOf("fg_k_tile", s) }

// validTileOf says whether the loaded tile kernel name (fg_k_tile,
// fg_k_tile_up or fg_k_stages234) can launch shape s.
func (p *Program) validTileOf(name string, s tileShape) bool {
	k := p.k[name]
	if s.BY <= 0 || s.RPT <= 0 || 32*s.BY > 1024 || p.tileSmem(name, s) > k.maxDyn {
		return false
	}
	if 32*s.BY > k.fn.Attribute(driver.FuncMaxThreadsPerBlock) {
		return false
	}
	return k.fn.MaxActiveBlocksPerMultiprocessor(32*s.BY, p.tileSmem(name, s)) > 0
}

// anyTile says whether kernel name can launch any candidate shape.
func (p *Program) anyTile(name string) bool {
	for _, s := range append([]tileShape{defaultTile}, tileCandidates...) {
		if p.validTileOf(name, s) {
			return true
		}
	}
	return false
}

// tileBlock is the argument block of a tile kernel: *tileArgs (fg_k_tile),
// *tileUpArgs (fg_k_tile_up), *stages234Args (fg_k_stages234).
type tileBlock interface {
	lattice() gridArgs
	setRows(rpt int) // the launch shape's rows per thread
	// detached is a copy without the flow's control block: the autotune's
	// launches must not read or write a flow's state.
	detached() tileBlock
}

func (a *tileArgs) lattice() gridArgs { return a.Grid }
func (a *tileArgs) setRows(rpt int)   { a.Rpt = int32(rpt) }
func (a *tileArgs) detached() tileBlock {
	c := *a
	c.Ctl = 0
	return &c
}

func (a *tileUpArgs) lattice() gridArgs { return a.Tile.Grid }
func (a *tileUpArgs) setRows(rpt int)   { a.Tile.Rpt = int32(rpt) }
func (a *tileUpArgs) detached() tileBlock {
	c := *a
	c.Tile.Ctl = 0
	return &c
}

func (a *stages234Args) lattice() gridArgs { return a.Grid }
func (a *stages234Args) setRows(rpt int)   { a.Rpt = int32(rpt) }
func (a *stages234Args) detached() tileBlock {
	c := *a
	c.Ctl = 0
	return &c
}

// tileGrid is the number of blocks of a tile launch of shape s over g.
func tileGrid(g gridArgs, s tileShape) int {
	ty := s.BY * s.RPT
	return int(g.Nchunk) * ((int(g.Ny) + ty - 1) / ty)
}

// launchTileOf launches tile kernel name (fg_k_tile, fg_k_tile_up, fg_k_stages234) over a's
// grid with shape s on stream st (nil: the default stream).
func (p *Program) launchTileOf(name string, a tileBlock, s tileShape, st driver.Stream) error {
	a.setRows(s.RPT)
	return launchArgs(p.k[name], tileGrid(a.lattice(), s), 32, s.BY, p.tileSmem(name, s), st, a)
}

// tileOverride is FIELDGO_TILE=BYxRPT (e.g. 8x2): a fixed shape, untuned and
// uncached, for every tile launch; the benchmarks time each shape's whole
// step with it (bench/device/tile_sweep.sh). ok is false when it is unset.
func (p *Program) tileOverride(names ...string) (s tileShape, ok bool, err error) {
	v := os.Getenv("FIELDGO_TILE")
	if v == "" {
		return s, false, nil
	}
	if _, err := fmt.Sscanf(v, "%dx%d", &s.BY, &s.RPT); err != nil {
		return defaultTile, false, errs.New(errs.Backend, "FIELDGO_TILE=%q: want BYxRPT (e.g. 8x2)", v)
	}
	for _, n := range names {
		if !p.validTileOf(n, s) {
			return defaultTile, false, errs.New(errs.Backend, "FIELDGO_TILE=%q: %s cannot launch blocks of 32x%d with %d bytes of shared memory", v, n, s.BY, p.tileSmem(n, s))
		}
	}
	return s, true, nil
}

// tileLaunch is one tile kernel launch the autotune times.
type tileLaunch struct {
	name string // fg_k_tile, fg_k_tile_up or fg_k_stages234
	args tileBlock
}

// tuneShape times every candidate shape that all of ls's kernels can
// launch, launching ls in order with it (a warm-up round, then the mean of
// three rounds, on the default stream), and returns the fastest with a
// report line. Launches write what their arguments say (out, the partials,
// the fused update's buffers): callers pass scratch or buffers the real
// launches overwrite, and no flow control block (a.ctl = 0).
func (p *Program) tuneShape(ls []tileLaunch) (tileShape, string, error) {
	cands := append([]tileShape(nil), tileCandidates...)
	// The occupancy API's block size for the default tile's shared memory.
	if _, block, rc := p.k[ls[0].name].fn.MaxPotentialBlockSize(p.tileSmem(ls[0].name, defaultTile), 0); rc == driver.Success {
		if by := block / 32; by > 0 {
			cands = append(cands, tileShape{BY: by, RPT: 1}, tileShape{BY: by, RPT: 2})
		}
	}
	var ev [2]driver.Event
	for i := range ev {
		var rc driver.Result
		ev[i], rc = driver.EventCreate(0)
		if err := check(rc, "cuEventCreate"); err != nil {
			return defaultTile, "", err
		}
		defer ev[i].Destroy()
	}
	t := make([]tileLaunch, len(ls))
	for i, l := range ls {
		t[i] = tileLaunch{l.name, l.args.detached()}
	}
	round := func(s tileShape) error {
		for i := range t {
			if err := p.launchTileOf(t[i].name, t[i].args, s, driver.Stream{}); err != nil {
				return err
			}
		}
		return nil
	}
	best, bestMs := defaultTile, float32(-1)
	var report []string
	seen := map[tileShape]bool{}
cand:
	for _, s := range cands {
		if seen[s] {
			continue
		}
		seen[s] = true
		for _, l := range t {
			if !p.validTileOf(l.name, s) {
				continue cand
			}
		}
		if err := round(s); err != nil { // warm-up
			continue
		}
		const reps = 3
		ev[0].Record(driver.Stream{})
		for r := 0; r < reps; r++ {
			if err := round(s); err != nil {
				return defaultTile, "", err
			}
		}
		ev[1].Record(driver.Stream{})
		if err := check(ev[1].Synchronize(), "cuEventSynchronize"); err != nil {
			return defaultTile, "", err
		}
		ms, _ := driver.ElapsedTime(ev[0], ev[1])
		m := ms / reps
		report = append(report, fmt.Sprintf("32x%d/%d: %.1f us", s.BY, s.RPT, 1e3*m))
		if bestMs < 0 || m < bestMs {
			best, bestMs = s, m
		}
	}
	if bestMs < 0 {
		return defaultTile, "", errs.New(errs.Backend, "%s: no launchable tile shape", ls[0].name)
	}
	sort.Strings(report)
	return best, fmt.Sprintf("chose 32x%d/%d of [%s]", best.BY, best.RPT, joinStrings(report, ", ")), nil
}

// tileFor returns the shape of a gradient's fg_k_tile launch for a's grid
// (tuned on a's own buffers: it writes a.out and the partials, which the
// real launch then overwrites). Called with the context current and p.mu
// held.
func (p *Program) tileFor(a *tileArgs, g kernels.Grid) (tileShape, error) {
	s, err := p.tuned(sizeClass(g), []tileLaunch{{"fg_k_tile", a}})
	if err == nil {
		p.setTileInfo("fg_k_tile", s)
	}
	return s, err
}

// tuned returns the shape for the tile launches ls (a gradient's one, or a
// flow step's four) on a grid of size class class: FIELDGO_TILE, or from
// memory, the disk cache or tuneShape, cached under the class and, for more
// than one launch, the last launch's kernel.
func (p *Program) tuned(class string, ls []tileLaunch) (tileShape, error) {
	var names []string
	for _, l := range ls {
		names = append(names, l.name)
	}
	if s, ok, err := p.tileOverride(names...); ok || err != nil {
		return s, err
	}
	if !p.tilesRead {
		p.readTunes()
	}
	key := class
	if len(ls) > 1 {
		key = fmt.Sprintf("%s step %d %s", class, len(ls), ls[len(ls)-1].name)
	}
	if s, ok := p.tiles[key]; ok {
		valid := true
		for _, n := range names {
			valid = valid && p.validTileOf(n, s)
		}
		if valid {
			return s, nil
		}
	}
	s, line, err := p.tuneShape(ls)
	if err != nil {
		return defaultTile, err
	}
	p.tuneReport = append(p.tuneReport, fmt.Sprintf("%s: %s", key, line))
	p.tiles[key] = s
	p.writeTunes()
	return s, nil
}

// setTileInfo records the shape tile kernel name was
// last launched with, for Describe.
func (p *Program) setTileInfo(name string, s tileShape) {
	k := p.k[name]
	k.info.BlockSize, k.info.BlockY, k.info.TileRows = 32*s.BY, s.BY, s.RPT
	k.info.DynShared = p.tileSmem(name, s)
	nb := k.fn.MaxActiveBlocksPerMultiprocessor(32*s.BY, k.info.DynShared)
	k.info.BlocksPerSM = nb
	if p.b.maxTPM > 0 {
		k.info.Occupancy = float64(nb*32*s.BY) / float64(p.b.maxTPM)
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
