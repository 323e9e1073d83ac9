package pybind

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// BuildInfo describes the Go runtime for bug reports (fg.show_versions), as
// JSON: the Go toolchain that built it, its target, the versions of the
// modules it was built with (arrow-go), and NVRTC's and the CUDA driver's
// versions, or why each is missing. Asking loads NVRTC and the driver when
// they are present, as the first CUDA Simulation would.
func BuildInfo() (info string, err error) {
	defer recoverInto(&err)
	d := map[string]any{"go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
	modules := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			v := m.Version
			if m.Replace != nil {
				v += " => " + m.Replace.Path + " " + m.Replace.Version
			}
			modules[m.Path] = v
		}
		for _, s := range bi.Settings {
			if s.Key == "CGO_ENABLED" || s.Key == "-buildmode" {
				d[s.Key] = s.Value
			}
		}
	}
	d["modules"] = modules
	if path, major, minor, e := cuda.NVRTCVersion(); e == nil {
		d["nvrtc"] = map[string]any{"version": fmt.Sprintf("%d.%d", major, minor), "path": path}
	} else {
		d["nvrtc"] = map[string]any{"error": e.Error()} // with every place tried
	}
	if v, e := cuda.DriverVersion(); e == nil {
		d["cuda_driver"] = map[string]any{"version": fmt.Sprintf("%d.%d", v/1000, v%1000/10)}
	} else {
		d["cuda_driver"] = map[string]any{"error": firstLine(e.Error())}
	}
	return jsonString(d), nil
}

// AddNVRTCPaths tells the CUDA backend where else NVRTC may be: paths holds
// library files, one a line (the Python package passes the copy that
// `pip install "fieldgo[cuda]"` put in its environment). Call it before the
// first CUDA use; later calls change nothing.
func AddNVRTCPaths(paths string) (err error) {
	defer recoverInto(&err)
	cuda.AddNVRTCCandidates(strings.Split(paths, "\n")...)
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
