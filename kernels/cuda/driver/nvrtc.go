package driver

/*
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// NVRTCVersion is nvrtcVersion of the loaded NVRTC.
func NVRTCVersion() (major, minor int) {
	var ma, mi C.int
	C.fg_nvrtcVersion(&ma, &mi)
	return int(ma), int(mi)
}

// NVRTCError is an NVRTC call that failed: Call names it
// ("nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetCUBINSize",
// "nvrtcGetCUBIN"), Msg is nvrtcGetErrorString.
type NVRTCError struct {
	Call string
	Msg  string
}

func (e *NVRTCError) Error() string { return e.Call + ": " + e.Msg }

func nvrtcError(call string, rc C.nvrtcResult) *NVRTCError {
	return &NVRTCError{Call: call, Msg: C.GoString(C.fg_nvrtcErrorString(rc))}
}

// cstrings is a C array of C strings, freed by free.
func cstrings(ss []string) (**C.char, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	a := unsafe.Slice((**C.char)(arr), len(ss))
	for i, s := range ss {
		a[i] = C.CString(s)
	}
	return (**C.char)(arr), func() {
		for i := range a {
			C.free(unsafe.Pointer(a[i]))
		}
		C.free(arr)
	}
}

// Compile compiles source (named name) with NVRTC and options opts, the
// headers headers[i] under the names headerNames[i], and returns the CUBIN
// and the program log (ptxas's report with --ptxas-options=-v). A failed
// call is an *NVRTCError; a failed compile's log comes with it.
func Compile(source, name string, headerNames, headers, opts []string) (cubin []byte, log string, err error) {
	csrc := C.CString(source)
	defer C.free(unsafe.Pointer(csrc))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	hs, freeH := cstrings(headers)
	defer freeH()
	hn, freeN := cstrings(headerNames)
	defer freeN()
	var prog C.nvrtcProgram
	if rc := C.fg_nvrtcCreateProgram(&prog, csrc, cname, C.int(len(headers)), hs, hn); rc != C.NVRTC_SUCCESS {
		return nil, "", nvrtcError("nvrtcCreateProgram", rc)
	}
	defer C.fg_nvrtcDestroyProgram(&prog)
	co, freeO := cstrings(opts)
	defer freeO()
	rc := C.fg_nvrtcCompileProgram(prog, C.int(len(opts)), co)
	var lsz C.size_t
	C.fg_nvrtcGetProgramLogSize(prog, &lsz)
	if lsz > 1 {
		lb := make([]byte, lsz)
		C.fg_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&lb[0])))
		log = strings.TrimRight(string(lb), "\x00")
	}
	if rc != C.NVRTC_SUCCESS {
		return nil, log, nvrtcError("nvrtcCompileProgram", rc)
	}
	var csz C.size_t
	if rc := C.fg_nvrtcGetCUBINSize(prog, &csz); rc != C.NVRTC_SUCCESS || csz == 0 {
		return nil, log, nvrtcError("nvrtcGetCUBINSize", rc)
	}
	cubin = make([]byte, csz)
	if rc := C.fg_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&cubin[0]))); rc != C.NVRTC_SUCCESS {
		return nil, log, nvrtcError("nvrtcGetCUBIN", rc)
	}
	return cubin, log, nil
}
