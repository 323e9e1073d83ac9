// Package cdatafuzz makes Arrow C Data structs by hand, well-formed or not, so
// that tests can throw malformed input at fieldgo's importers the way a buggy
// producer would. Only the fuzz tests use it.
package cdatafuzz

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../pybind/arrow_c_abi.h"

// Every allocation a producer makes is freed by its release callbacks.
static void fz_release_schema(struct ArrowSchema* s) {
	for (int64_t i = 0; i < s->n_children; i++) {
		struct ArrowSchema* c = s->children[i];
		if (c->release) c->release(c);
		free(c);
	}
	free(s->children);
	free((void*)s->format);
	free((void*)s->name);
	free((void*)s->metadata);
	s->release = NULL;
}

static void fz_release_array(struct ArrowArray* a) {
	for (int64_t i = 0; i < a->n_children; i++) {
		struct ArrowArray* c = a->children[i];
		if (c->release) c->release(c);
		free(c);
	}
	free(a->children);
	free((void*)a->buffers);
	a->release = NULL;
}

static struct ArrowSchema* fz_schemas(int n) { return calloc(n > 0 ? n : 1, sizeof(struct ArrowSchema)); }
static struct ArrowArray* fz_arrays(int n) { return calloc(n > 0 ? n : 1, sizeof(struct ArrowArray)); }
static struct ArrowSchema** fz_schema_ptrs(int n) { return calloc(n > 0 ? n : 1, sizeof(void*)); }
static struct ArrowArray** fz_array_ptrs(int n) { return calloc(n > 0 ? n : 1, sizeof(void*)); }
static const void** fz_buffers(int n) { return calloc(n > 0 ? n : 1, sizeof(void*)); }
static void fz_set_schema_release(struct ArrowSchema* s) { s->release = fz_release_schema; }
static void fz_set_array_release(struct ArrowArray* a) { a->release = fz_release_array; }
static char* fz_bytes(const char* p, int n) { char* b = malloc(n + 1); memcpy(b, p, n); b[n] = 0; return b; }
*/
import "C"

import (
	"encoding/binary"
	"unsafe"
)

// Column describes one child of the struct array a producer emits. Values
// always point into a block of Capacity doubles that the producer owns, so a
// column may lie about everything except where its buffer is.
type Column struct {
	Format    string // "g" for float64; anything else to test refusals
	Name      string
	Length    int64
	NullCount int64
	Offset    int64
	NBuffers  int64 // 0..2 (more would make the importer read past the pointer list)
	NullData  bool  // the data buffer pointer is NULL
}

// Batch is a RecordBatch as the C Data Interface sees it.
type Batch struct {
	Length   int64
	Metadata [][2]string // schema metadata key/value pairs
	Columns  []Column
}

// Capacity is the number of doubles behind every column's data buffer.
const Capacity = 4096

// Producer owns the memory its structs point into.
type Producer struct {
	data unsafe.Pointer // Capacity doubles, zeroed
}

// New allocates a producer. Free it after every struct it made is released.
func New() *Producer { return &Producer{data: C.calloc(Capacity, 8)} }

// Free releases the data block.
func (p *Producer) Free() { C.free(p.data) }

// Data is the block the columns point into.
func (p *Producer) Data() []float64 { return unsafe.Slice((*float64)(p.data), Capacity) }

func cstr(s string) *C.char {
	return C.fz_bytes((*C.char)(unsafe.Pointer(unsafe.StringData(s+"\x00"))), C.int(len(s)))
}

// encodeMetadata writes the C Data Interface's metadata encoding.
func encodeMetadata(kv [][2]string) []byte {
	var b []byte
	put := func(v int32) { b = binary.LittleEndian.AppendUint32(b, uint32(v)) }
	put(int32(len(kv)))
	for _, p := range kv {
		put(int32(len(p[0])))
		b = append(b, p[0]...)
		put(int32(len(p[1])))
		b = append(b, p[1]...)
	}
	return b
}

// Export fills schema and array (addresses of zeroed structs) with b.
func (p *Producer) Export(b Batch, schema, array unsafe.Pointer) {
	s := (*C.struct_ArrowSchema)(schema)
	a := (*C.struct_ArrowArray)(array)
	n := len(b.Columns)
	s.format = cstr("+s")
	s.name = cstr("")
	if b.Metadata != nil {
		md := encodeMetadata(b.Metadata)
		s.metadata = C.fz_bytes((*C.char)(unsafe.Pointer(&md[0])), C.int(len(md)))
	}
	s.n_children = C.int64_t(n)
	s.children = C.fz_schema_ptrs(C.int(n))
	a.length = C.int64_t(b.Length)
	a.n_buffers = 1
	a.buffers = C.fz_buffers(1)
	a.n_children = C.int64_t(n)
	a.children = C.fz_array_ptrs(C.int(n))
	schemaKids := unsafe.Slice(s.children, max(n, 1))
	arrayKids := unsafe.Slice(a.children, max(n, 1))
	for i, col := range b.Columns {
		cs := C.fz_schemas(1)
		cs.format = cstr(col.Format)
		cs.name = cstr(col.Name)
		C.fz_set_schema_release(cs)
		schemaKids[i] = cs
		ca := C.fz_arrays(1)
		ca.length = C.int64_t(col.Length)
		ca.null_count = C.int64_t(col.NullCount)
		ca.offset = C.int64_t(col.Offset)
		ca.n_buffers = C.int64_t(col.NBuffers)
		ca.buffers = C.fz_buffers(2)
		if !col.NullData {
			unsafe.Slice(ca.buffers, 2)[1] = p.data
		}
		C.fz_set_array_release(ca)
		arrayKids[i] = ca
	}
	C.fz_set_schema_release(s)
	C.fz_set_array_release(a)
}
