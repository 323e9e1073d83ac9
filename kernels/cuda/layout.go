package cuda

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
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

// CheckSyntax compiles source for sm_90 through NVRTC's front end only
// (--fdevice-syntax-only: static_asserts are evaluated, no code is
// generated), for the layout checks; an NVRTC without the option compiles
// it whole. A failure is errs.Compile with the log.
func CheckSyntax(source string) (log string, err error) {
	if err := loadNVRTC(); err != nil {
		return "", err
	}
	_, log, err = driver.Compile(source, "fieldgo.cu", nil, nil, append(NVRTCOptions("sm_90"), "--fdevice-syntax-only"))
	var ne *driver.NVRTCError
	if errors.As(err, &ne) && ne.Call == "nvrtcCompileProgram" && strings.Contains(ne.Msg, "OPTION") {
		_, log, err = CompileCUBIN(uncachedSource(source), "sm_90")
		return log, err
	}
	if err != nil {
		return log, errs.New(errs.Compile, "NVRTC (%s) failed the syntax check: %v\n%s", nvrtc.path, err, log)
	}
	return log, nil
}

// SignaturePrelude declares fg_sig<F>, which reads a kernel's parameter list
// off its type (decltype of the entry point): the count, each parameter's
// size, alignment, offset in the parameter buffer (each parameter at the
// next multiple of its alignment, as in a C struct of them) and kind ('p'
// pointer, 'f' floating, 'i' integer, 's' struct), and first, the first
// parameter's type.
const SignaturePrelude = `
template <class T> struct fg_kind { static constexpr char v = 's'; };
template <class T> struct fg_kind<T*> { static constexpr char v = 'p'; };
template <> struct fg_kind<float> { static constexpr char v = 'f'; };
template <> struct fg_kind<double> { static constexpr char v = 'f'; };
template <> struct fg_kind<int> { static constexpr char v = 'i'; };
template <> struct fg_kind<unsigned> { static constexpr char v = 'i'; };
template <> struct fg_kind<long long> { static constexpr char v = 'i'; };
template <> struct fg_kind<unsigned long long> { static constexpr char v = 'i'; };
template <class F> struct fg_sig;
template <class P0, class... P> struct fg_sig<void(P0, P...)> {
    typedef P0 first;
    static constexpr int count = 1 + sizeof...(P);
    static constexpr unsigned long long size(int i) {
        const unsigned long long s[] = {sizeof(P0), sizeof(P)...};
        return s[i];
    }
    static constexpr unsigned long long align(int i) {
        const unsigned long long a[] = {alignof(P0), alignof(P)...};
        return a[i];
    }
    static constexpr char kind(int i) {
        const char k[] = {fg_kind<P0>::v, fg_kind<P>::v...};
        return k[i];
    }
    static constexpr unsigned long long offset(int i) {
        unsigned long long o = 0;
        for (int k = 0;; ++k) {
            o = (o + align(k) - 1) / align(k) * align(k);
            if (k == i) return o;
            o += size(k);
        }
    }
};
`

// SignatureAsserts lists static_asserts that kernel (an extern "C" entry
// point of the source they are compiled with) takes arguments of Go type t
// in kind k: for driver.Block one parameter of t's size, whose C type has
// t's layout (LayoutAsserts); for driver.Params t's fields one for one, each
// of the parameter's size, kind (driver.DevicePtr a pointer, float32 and
// float64 floating, other numbers integers) and offset in the parameter
// buffer. Compile them after the source and SignaturePrelude.
func SignatureAsserts(kernel string, t reflect.Type, k driver.Kind) []string {
	sig := fmt.Sprintf("fg_sig<decltype(%s)>", kernel)
	var out []string
	if k == driver.Block {
		out = append(out, fmt.Sprintf("static_assert(%s::count == 1, \"%s takes one argument block\");", sig, kernel),
			fmt.Sprintf("static_assert(%s::kind(0) == 's' && %s::size(0) == %d, \"%s: the argument block's size\");", sig, sig, t.Size(), kernel))
		return append(out, LayoutAsserts(sig+"::first", t)[1:]...)
	}
	out = append(out, fmt.Sprintf("static_assert(%s::count == %d, \"%s: %d parameters\");", sig, t.NumField(), kernel, t.NumField()))
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		kind := byte('i')
		switch {
		case f.Type == reflect.TypeFor[driver.DevicePtr]():
			kind = 'p'
		case f.Type.Kind() == reflect.Float32 || f.Type.Kind() == reflect.Float64:
			kind = 'f'
		case f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Array:
			kind = 's'
		}
		name := f.Tag.Get("c")
		out = append(out, fmt.Sprintf("static_assert(%s::count <= %d || (%s::size(%d) == %d && %s::kind(%d) == '%c' && %s::offset(%d) == %d), \"%s parameter %d (%s)\");",
			sig, i, sig, i, f.Type.Size(), sig, i, kind, sig, i, f.Offset, kernel, i, name))
	}
	return out
}

// CheckSignatures holds every entry point of source to the argument type
// registered for it with the driver (driver.Register): it compiles source
// for sm_90 once to list the entry points (ptxas's report), then again with
// SignatureAsserts of each. It returns the entry points checked and those
// with no registered type (not checked); a layout that differs fails the
// compile (errs.Compile, the log naming the parameter or field). It needs
// NVRTC with __builtin_offsetof (OffsetofSupported), no GPU.
func CheckSignatures(source string) (checked, unregistered []string, err error) {
	// A new entry point in each compile keeps NVRTC from the driver's
	// compute cache, whose hits CompileCUBIN would compile again for a
	// ptxas report.
	_, log, err := CompileCUBIN(uncachedSource(source), "sm_90")
	if err != nil {
		return nil, nil, err
	}
	var entries []string
	for name := range ParsePtxasLog(log) {
		if !strings.HasPrefix(name, UncachedEntry) {
			entries = append(entries, name)
		}
	}
	sort.Strings(entries)
	asserts := []string{source, SignaturePrelude}
	for _, name := range entries {
		at, ok := driver.Lookup(name)
		if !ok {
			unregistered = append(unregistered, name)
			continue
		}
		checked = append(checked, name)
		asserts = append(asserts, SignatureAsserts(name, at.Type, at.Kind)...)
	}
	if log, err := CheckSyntax(strings.Join(asserts, "\n") + "\n"); err != nil {
		return checked, unregistered, errs.Wrap(errs.Compile, err, "argument types differ from the kernels' signatures:\n%s", log)
	}
	return checked, unregistered, nil
}
