package cuda

import (
	"fmt"
	"reflect"

	"github.com/fieldgo/fieldgo/errs"
)

// LayoutAsserts lists static_asserts that C type ctype has Go type t's
// layout: its size and, field by field (nested structs by their path), each
// named field's offset and size, the C name in the field's c tag. Blank
// fields are padding and are not named. Compiled with the source that
// declares ctype (CompileCUBIN, no GPU), they hold an argument block's Go
// twin to the CUDA compiler's layout.
func LayoutAsserts(ctype string, t reflect.Type) []string {
	out := []string{fmt.Sprintf("static_assert(sizeof(%s) == %d, \"sizeof(%s)\");", ctype, t.Size(), ctype)}
	var walk func(t reflect.Type, path string, off uintptr)
	walk = func(t reflect.Type, path string, off uintptr) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Name == "_" {
				continue
			}
			name := f.Tag.Get("c")
			if name == "" {
				out = append(out, fmt.Sprintf("#error %s.%s has no c tag", t.Name(), f.Name))
				continue
			}
			p := path + name
			out = append(out,
				fmt.Sprintf("static_assert(__builtin_offsetof(%s, %s) == %d, \"%s.%s offset\");", ctype, p, off+f.Offset, ctype, p),
				fmt.Sprintf("static_assert(sizeof(((%s*)0)->%s) == %d, \"%s.%s size\");", ctype, p, f.Type.Size(), ctype, p))
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, p+".", off+f.Offset)
			}
		}
	}
	walk(t, "", 0)
	return out
}

// OffsetofSupported reports whether the loaded NVRTC can check layouts:
// NVRTC 13.0 (the H200 machine's) has no __builtin_offsetof ("identifier is
// undefined"); 13.5, the test dependency CI uses, has. A layout does not
// depend on the compiler that checks it, so one that can suffices.
func OffsetofSupported() error {
	probe := "struct fg_probe { int a; double b; };\n" +
		"static_assert(__builtin_offsetof(fg_probe, b) == 8, \"offsetof\");\n" +
		"extern \"C\" __global__ void fg_probe_kernel() {}\n"
	if _, log, err := CompileCUBIN(probe, "sm_90"); err != nil {
		_, ma, mi, _ := NVRTCVersion()
		return errs.New(errs.Backend, "NVRTC %d.%d cannot evaluate __builtin_offsetof in a static_assert, so layouts are not checked "+
			"with it (they are with NVRTC 13.5): %v\n%s", ma, mi, err, log)
	}
	return nil
}
