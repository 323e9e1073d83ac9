package cuda

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCgoOnlyInDriver keeps the direction of the CUDA layer: cgo (import
// "C") and C sources live in kernels/cuda/driver alone; this package, the
// GPU adapters (gpunbody, gpuradiation) and every other package under
// kernels/cuda are pure Go clients of the driver, tests included.
func TestCgoOnlyInDriver(t *testing.T) {
	fset := token.NewFileSet()
	n, inDriver := 0, 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		driverFile := filepath.Dir(path) == "driver"
		switch filepath.Ext(path) {
		case ".c", ".h", ".cc", ".cpp", ".s", ".S":
			if !driverFile {
				t.Errorf("%s: C sources belong in kernels/cuda/driver", path)
			}
			return nil
		case ".go":
		default:
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != "C" {
				continue
			}
			if !driverFile {
				t.Errorf("%s imports \"C\": only kernels/cuda/driver may use cgo; call the driver instead", path)
			} else {
				inDriver++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 || inDriver == 0 {
		t.Fatalf("parsed %d Go files, %d of the driver's with cgo: the walk missed the packages", n, inDriver)
	}
}
