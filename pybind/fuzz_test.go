package pybind

import (
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/internal/cdatafuzz"
)

// notInternal fails the test when err is a recovered panic: every bad input
// must come back as a typed error naming the problem, never as a crash.
func notInternal(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "fieldgo[InternalError]") {
		t.Fatalf("bad input reached a panic: %v", err)
	}
}

// FuzzImportField throws hand-made, often malformed Arrow C Data at the import
// path Python uses (a pair block filled by a producer, then ImportField).
func FuzzImportField(f *testing.F) {
	f.Add(int64(16), 2, "g", int64(0), int64(0), int64(2), false, "nx", "4", `{"Nx":4,"Ny":4,"Hx":1,"Hy":1,"Origin":[0,0],"Boundary":"fixed"}`)
	f.Add(int64(16), 1, "i", int64(0), int64(0), int64(2), false, "", "", `{"Nx":4,"Ny":4,"Hx":1,"Hy":1,"Origin":[0,0],"Boundary":"fixed"}`)
	f.Add(int64(12), 1, "g", int64(3), int64(4), int64(2), true, "origin", "[1,", "")
	f.Add(int64(9), 3, "g", int64(0), int64(1), int64(1), false, "nx", "3", "")
	f.Add(int64(0), 0, "+s", int64(0), int64(0), int64(0), false, "components", `["a"]`, `{"Nx":-1}`)
	f.Fuzz(func(t *testing.T, length int64, ncols int, format string, nulls, offset, nbuf int64, nullData bool, key, val, lattice string) {
		// Keep the producer honest about memory: a column's declared extent stays
		// inside its buffer and the pointer list has two slots.
		if length < 0 || length > 512 || offset < 0 || offset > 512 || ncols < 0 || ncols > 4 || nbuf < 0 || nbuf > 2 {
			t.Skip()
		}
		p := cdatafuzz.New()
		defer p.Free()
		b := cdatafuzz.Batch{Length: length, Metadata: [][2]string{{key, val}, {"ny", "4"}, {"hx", "1"}, {"hy", "1"},
			{"origin", "[0,0]"}, {"boundary", "periodic"}}}
		for c := 0; c < ncols; c++ {
			b.Columns = append(b.Columns, cdatafuzz.Column{Format: format, Name: string(rune('a' + c)), Length: length,
				NullCount: nulls, Offset: offset, NBuffers: nbuf, NullData: nullData})
		}
		pair := NewArrowPair()
		p.Export(b, cAddr(pair), cAddr(ArrowPairArray(pair)))
		h, err := ImportField(pair, lattice)
		notInternal(t, err)
		if err == nil {
			// An accepted field is fully usable.
			_, err = FieldInfo(h)
			notInternal(t, err)
			_, err = FieldSum(h, 0)
			notInternal(t, err)
			if err := ReleaseField(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := FreeArrowPair(pair); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSpecAndOptions feeds arbitrary JSON to the functions that parse what
// Python sends: theory specs, simulation and minimize options, field names and
// lattice descriptions.
func FuzzSpecAndOptions(f *testing.F) {
	spec := `{"name": "t", "fields": ["a"], "params": ["k"], "densities": ["d"], "constraint": "", "gradient": "derived"}`
	f.Add(spec, `{"backend": "cpu"}`, `["a","b"]`, `{"tol": 1e-6}`, "fixed")
	f.Add(`{"name": ""}`, `{"backend": "tpu"}`, `[1]`, `{"method": "x"}`, "moebius")
	f.Add(`{"name":"t","fields":["a","a"]}`, `{"precision":"float16"}`, `null`, `{"dt": -1}`, "periodic")
	f.Add(`[]`, `{`, `["",""]`, `{"max_steps": -5}`, "")
	f.Fuzz(func(t *testing.T, spec, options, names, minimize, boundary string) {
		h, err := NewField(5, 5, 1, 1, 0, 0, boundary, names)
		notInternal(t, err)
		if err == nil {
			ReleaseField(h)
		}
		_, err = ImportField(0, spec)
		notInternal(t, err)
		// A spec that parses still needs a compiler run; use a source that does
		// not compile so the fuzzer never waits for cc on a good one twice.
		sh, err := NewSimulation(spec, "#error fuzz", 5, 5, 1, 1, 0, 0, boundary, options)
		notInternal(t, err)
		if err == nil {
			t.Fatalf("a point source that cannot compile was accepted")
		}
		if c, err := SimAdvanceStart(sh, 1, 0); err != nil {
			notInternal(t, err)
		} else {
			for done := false; !done; done, _ = CallWait(c, 10) {
			}
			_, err = CallResult(c)
			notInternal(t, err)
		}
		notInternal(t, SimStartMinimize(sh, minimize))
		notInternal(t, SimSetParams(sh, minimize))
	})
}
