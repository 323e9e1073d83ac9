package gpuradiation

import (
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/internal/hostmem"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// pinnedPool is the memory.Allocator the cubes come back into: page-locked
// blocks from the driver (cuMemAllocHost), which the device copies into at
// the link's speed, where pageable memory goes through the driver's staging
// buffer at a fraction of it. Locking pages is itself slow (the driver
// faults in, clears and maps every page: about as long as the copy it
// speeds up), so a block released by its cube is kept for the next cube
// that fits it instead of being freed: a script or benchmark that computes
// one cube after another pins once. At most PinnedIdle blocks are kept;
// Device.Close frees them. When the driver refuses (page-locked memory is
// limited), the cube takes hostmem.Allocator's pageable memory instead.
type pinnedPool struct {
	b    *cuda.Backend
	mu   sync.Mutex
	live map[unsafe.Pointer]pinnedBlock // by address
	idle []pinnedBlock                  // oldest first
}

// PinnedIdle is the pool's idle blocks at most: with cube = fields(...)
// run again, the new cube is allocated while the old one is alive and takes
// the block the one before released, so two blocks alternate with one
// idle. Idle blocks are page-locked memory the rest of the machine cannot
// use: a block over PinnedIdleBytes is freed, not kept.
const (
	PinnedIdle      = 1
	PinnedIdleBytes = 8 << 30
)

type pinnedBlock struct {
	mem  []byte // the whole block
	free func() // nil: hostmem.Allocator's (the fallback)
}

func newPinnedPool(b *cuda.Backend) *pinnedPool {
	return &pinnedPool{b: b, live: map[unsafe.Pointer]pinnedBlock{}}
}

// Allocate returns size bytes (not cleared: a cube's device writes every
// value): the smallest idle block that holds them without wasting over half
// of itself, else a new block.
func (p *pinnedPool) Allocate(size int) []byte {
	if size <= 0 {
		return hostmem.Allocator.Allocate(size)
	}
	p.mu.Lock()
	best := -1
	for i, blk := range p.idle {
		if c := len(blk.mem); c >= size && c/2 <= size && (best < 0 || c < len(p.idle[best].mem)) {
			best = i
		}
	}
	if best >= 0 {
		blk := p.idle[best]
		p.idle = append(p.idle[:best], p.idle[best+1:]...)
		p.live[unsafe.Pointer(unsafe.SliceData(blk.mem))] = blk
		p.mu.Unlock()
		return blk.mem[:size]
	}
	p.mu.Unlock()
	blk := pinnedBlock{}
	if f, free, err := p.b.HostAlloc((size + 7) / 8); err == nil {
		blk = pinnedBlock{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), size), free: free}
	} else {
		blk.mem = hostmem.Allocator.Allocate(size)
	}
	p.mu.Lock()
	p.live[unsafe.Pointer(unsafe.SliceData(blk.mem))] = blk
	p.mu.Unlock()
	return blk.mem
}

// Free takes a block back: pinned, into the idle list (the oldest beyond
// PinnedIdle freed); pageable, to hostmem.Allocator.
func (p *pinnedPool) Free(b []byte) {
	if len(b) == 0 {
		hostmem.Allocator.Free(b)
		return
	}
	p.mu.Lock()
	key := unsafe.Pointer(unsafe.SliceData(b))
	blk, ok := p.live[key]
	delete(p.live, key)
	var drop []pinnedBlock
	if ok && blk.free != nil && len(blk.mem) > PinnedIdleBytes {
		drop = append(drop, blk)
	} else if ok && blk.free != nil {
		p.idle = append(p.idle, blk)
		if k := len(p.idle) - PinnedIdle; k > 0 {
			drop = append(drop, p.idle[:k]...)
			p.idle = append([]pinnedBlock(nil), p.idle[k:]...)
		}
	}
	p.mu.Unlock()
	if ok && blk.free == nil {
		hostmem.Allocator.Free(blk.mem)
	}
	for _, d := range drop {
		d.free()
	}
}

// Reallocate is Allocate, copy and Free (cubes never grow).
func (p *pinnedPool) Reallocate(size int, b []byte) []byte {
	n := p.Allocate(size)
	copy(n, b)
	p.Free(b)
	return n
}

// drain frees the idle blocks.
func (p *pinnedPool) drain() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, blk := range idle {
		blk.free()
	}
}
