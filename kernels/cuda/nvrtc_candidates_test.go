package cuda

import (
	"slices"
	"testing"
)

// The libraries the Python package finds (pip's nvidia-cuda-nvrtc) are tried after
// $FIELDGO_NVRTC and the loader path's libnvrtc, before the site-packages globs.
func TestAddedNVRTCCandidatesComeAfterTheLoaderPath(t *testing.T) {
	t.Setenv("FIELDGO_NVRTC", "/from/env/libnvrtc.so")
	extraNVRTC.Lock()
	saved := extraNVRTC.paths
	extraNVRTC.paths = nil
	extraNVRTC.Unlock()
	defer func() {
		extraNVRTC.Lock()
		extraNVRTC.paths = saved
		extraNVRTC.Unlock()
	}()
	AddNVRTCCandidates("/wheel/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "")
	c := nvrtcCandidates()
	env, soname, wheel := slices.Index(c, "/from/env/libnvrtc.so"), slices.Index(c, "libnvrtc.so.12"), slices.Index(c, "/wheel/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
	if env != 0 || soname < 0 || wheel <= soname {
		t.Fatalf("candidates %q: want $FIELDGO_NVRTC first, then the sonames, then the added library", c)
	}
	if slices.Contains(c, "") {
		t.Fatalf("an empty path became a candidate: %q", c)
	}
}
