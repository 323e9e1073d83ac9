package gpunbody

import (
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// The N-body kernels take parameter lists (kernels/src/nbody.cu); each has
// a Go struct here, one field per parameter in order with the parameter's
// name in the c tag, registered with the driver (driver.Params) so that
// Module.Launch refuses any other type. TestArgumentLayouts compiles
// nbody.cu with NVRTC and a static_assert per parameter of every entry
// point, holding the structs to the kernels' signatures (no GPU needed).
// R is the kernel's precision: float32 for _f32, float64 for _f64.

// accelArgs are the acceleration kernels' parameters (tiled and untiled,
// with and without potentials).
type accelArgs[R float32 | float64] struct {
	Body driver.DevicePtr `c:"body"`
	Acc  driver.DevicePtr `c:"acc"`
	N    int32            `c:"n"`
	Eps2 R                `c:"eps2"`
}

// kickDriftArgs are fg_nbody_kick_drift_<prec>'s parameters.
type kickDriftArgs[R float32 | float64] struct {
	Body driver.DevicePtr `c:"body"`
	Vel  driver.DevicePtr `c:"vel"`
	Acc  driver.DevicePtr `c:"acc"`
	N    int32            `c:"n"`
	H    R                `c:"h"`
	Dt   R                `c:"dt"`
}

// kickArgs are fg_nbody_kick_<prec>'s parameters.
type kickArgs[R float32 | float64] struct {
	Vel driver.DevicePtr `c:"vel"`
	Acc driver.DevicePtr `c:"acc"`
	N   int32            `c:"n"`
	H   R                `c:"h"`
}

// checkArgs32 are the float32 check kernels' parameters
// (fg_nbody_rsqrt_check_f32, fg_nbody_rcp_check_f32).
type checkArgs32 struct {
	X    driver.DevicePtr `c:"x"`
	Lib  driver.DevicePtr `c:"lib"`
	Fast driver.DevicePtr `c:"fast"`
	N    int32            `c:"n"`
}

// checkArgs64 are the float64 check kernels' parameters, with the raw
// estimate.
type checkArgs64 struct {
	X    driver.DevicePtr `c:"x"`
	Lib  driver.DevicePtr `c:"lib"`
	Fast driver.DevicePtr `c:"fast"`
	Est  driver.DevicePtr `c:"est"`
	N    int32            `c:"n"`
}

var (
	_ = driver.RegisterMatching[accelArgs[float32]](driver.Params, `fg_nbody_(tiled\w*|untiled)_f32(_pot)?`)
	_ = driver.RegisterMatching[accelArgs[float64]](driver.Params, `fg_nbody_(tiled\w*|untiled)_f64(_pot)?`)
	_ = driver.Register[kickDriftArgs[float32]](driver.Params, "fg_nbody_kick_drift_f32")
	_ = driver.Register[kickDriftArgs[float64]](driver.Params, "fg_nbody_kick_drift_f64")
	_ = driver.Register[kickArgs[float32]](driver.Params, "fg_nbody_kick_f32")
	_ = driver.Register[kickArgs[float64]](driver.Params, "fg_nbody_kick_f64")
	_ = driver.Register[checkArgs32](driver.Params, "fg_nbody_rsqrt_check_f32", "fg_nbody_rcp_check_f32")
	_ = driver.Register[checkArgs64](driver.Params, "fg_nbody_rsqrt_check_f64", "fg_nbody_rcp_check_f64")
)
