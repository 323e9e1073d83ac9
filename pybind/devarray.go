package pybind

import (
	"encoding/json"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// deviceField is where a simulation's working field lives, for consumers
// that take memory without a copy (Python's DeviceField:
// __arrow_c_device_array__, __cuda_array_interface__).
type deviceField struct {
	DeviceType string `json:"device_type"` // "cuda" or "cpu" (then use the host field)
	Ptr        uint64 `json:"ptr"`
	Len        int    `json:"len"`   // values: ncomp columns of the lattice's sites, x fastest
	DType      string `json:"dtype"` // "float64" or "float32"
	Device     int    `json:"device"`
	NComp      int    `json:"ncomp"`
	Nx         int    `json:"nx"`
	Ny         int    `json:"ny"`
}

// SimDeviceField describes the simulation's current field where the backend
// keeps it, as JSON (deviceField). On the CUDA backend the pointer is device
// memory holding the state as of the last Advance (or SetField), and all
// queued device work is finished before this returns, so a consumer on any
// stream reads a settled state; it stays valid until the simulation closes
// and is overwritten by the next minimize. On the CPU the working field is
// the host field itself: device_type "cpu" and no pointer.
func SimDeviceField(h int64) (out string, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return "", bridge(err)
	}
	lat := s.Lattice()
	d := deviceField{DeviceType: "cpu", NComp: len(s.Theory().Spec.Fields), Nx: lat.Nx, Ny: lat.Ny}
	sites := lat.Sites()
	if p, ok := s.Program().(*cuda.Program); ok {
		buf, err := s.FieldBuffer()
		if err != nil {
			return "", bridge(err)
		}
		a, err := p.DeviceArray(buf)
		if err != nil {
			return "", bridge(err)
		}
		if a.Len != d.NComp*sites {
			return "", bridge(errs.New(errs.Internal, "device field holds %d values, expected %d components of %d sites", a.Len, d.NComp, sites))
		}
		if err := p.Sync(); err != nil {
			return "", bridge(err)
		}
		d.DeviceType, d.Ptr, d.Len, d.DType, d.Device = "cuda", a.Ptr, a.Len, a.DType, a.Device
	}
	b, _ := json.Marshal(d)
	return string(b), nil
}
