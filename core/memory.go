package core

import "github.com/fieldgo/fieldgo/internal/hostmem"

// Allocator is the C allocator behind every bulk buffer fieldgo creates
// (hostmem.Allocator, which the workloads share). C memory (not the Go heap)
// can cross cgo, be seen by Python and be copied to a device.
var Allocator = hostmem.Allocator

// AllocatedBytes is the number of bytes Allocator currently holds: 0 once every
// field and every export of one has been released.
func AllocatedBytes() int64 { return hostmem.AllocatedBytes() }
