package kernels

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoPhysicsImports keeps the dependency direction of every workload:
// contracts live with the kernels (this package), the physics packages use
// them, and no package under kernels/ depends on a physics package or the
// bridge, directly or through another package. Tests may (the GPU adapters'
// tests compare with core/nbody and core/radiation's CPU results).
func TestNoPhysicsImports(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages with (a prebuilt test binary)")
	}
	const module = "github.com/fieldgo/fieldgo/"
	forbidden := func(p string) bool {
		for _, f := range []string{"core", "core/nbody", "core/radiation", "core/spline", "core/trajectory", "pybind"} {
			if p == module+f || strings.HasPrefix(p, module+f+"/") {
				return true
			}
		}
		return false
	}
	// Deps is the transitive closure of a package's imports (test files
	// left out).
	out, err := exec.Command(goCmd, "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"kernels/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n++
		for _, dep := range fields[1:] {
			if forbidden(dep) {
				t.Errorf("%s depends on %s: kernels must not import a physics package (put the contract in package kernels)", fields[0], dep)
			}
		}
	}
	if n < 6 {
		t.Fatalf("go list named %d packages under kernels/, want kernels, cpu, cuda, src and the GPU adapters:\n%s", n, out)
	}
}
