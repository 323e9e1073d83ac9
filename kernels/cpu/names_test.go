package cpu

import (
	"slices"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/src"
)

// The kernel list read from the template holds every function it exports
// (a kernel whose signature the pattern missed would not be loaded), and
// the ones the backend calls by name.
func TestKernelNamesAreTheTemplatesKernels(t *testing.T) {
	if n := strings.Count(src.CPUKernels, "\nFG_EXPORT "); n != len(kernelNames) {
		t.Fatalf("%d FG_EXPORT functions in the template, %d kernels read: %v", n, len(kernelNames), kernelNames)
	}
	for _, k := range []string{"fg_k_continuum", "fg_k_consistent", "fg_k_combine", "fg_k_density_free"} {
		if !slices.Contains(kernelNames, k) {
			t.Fatalf("%s missing from %v", k, kernelNames)
		}
	}
}
