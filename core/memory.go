package core

import (
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

// Allocator is the C allocator behind every bulk buffer fieldgo creates. C
// memory (not the Go heap) can cross cgo, be seen by Python and be copied to a
// device.
var Allocator = mallocator.NewMallocator()

// AllocatedBytes is the number of bytes Allocator currently holds: 0 once every
// field and every export of one has been released.
func AllocatedBytes() int64 { return Allocator.AllocatedBytes() }
