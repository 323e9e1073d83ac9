package gpuradiation

import "github.com/fieldgo/fieldgo/kernels/cuda/driver"

// Every kernel of radiation.cu launches through Module.Launch with a Go
// struct registered with the driver: the tiled, split and comparison
// kernels take args[F] (fg_rad_args<F>) by value (driver.Block), the shift,
// unscale and search kernels parameter lists (driver.Params: one field per
// parameter, in order, the parameter's name in the c tag).
// TestArgumentLayout holds each to the CUDA compiler's layout and the
// kernels' signatures (NVRTC, no GPU).
var (
	_ = driver.RegisterMatching[args[float64]](driver.Block, `fg_rad_(newton|rk4)_\w+_f64(_\w+)?|fg_rad_field_f64_split`)
	_ = driver.RegisterMatching[args[float32]](driver.Block, `fg_rad_(newton|rk4)_\w+_f32(_\w+)?|fg_rad_field_f32_split`)
	_ = driver.Register[shiftSlotArgs](driver.Params, "fg_rad_shift_slot_f64", "fg_rad_shift_slot_f32")
	_ = driver.Register[shiftObsArgs](driver.Params, "fg_rad_shift_obs_f64", "fg_rad_shift_obs_f32")
	_ = driver.Register[unscaleArgs](driver.Params, "fg_rad_unscale")
	_ = driver.Register[searchAgreeArgs](driver.Params, "fg_rad_search_agree_f64")
)

// shiftSlotArgs are fg_rad_shift_slot_<prec>'s parameters: the shifted
// times slot-major through the schedule (tp is double* or float*).
type shiftSlotArgs struct {
	Times   driver.DevicePtr `c:"times"`
	Tstride int32            `c:"tstride"`
	Shift   driver.DevicePtr `c:"shift"`
	Perm    driver.DevicePtr `c:"perm"`
	O       int32            `c:"O"`
	S       int32            `c:"S"`
	TP      driver.DevicePtr `c:"tp"`
}

// shiftObsArgs are fg_rad_shift_obs_<prec>'s parameters: observer-major.
type shiftObsArgs struct {
	Times   driver.DevicePtr `c:"times"`
	Tstride int32            `c:"tstride"`
	Shift   driver.DevicePtr `c:"shift"`
	O       int32            `c:"O"`
	S       int32            `c:"S"`
	TP      driver.DevicePtr `c:"tp"`
}

// unscaleArgs are fg_rad_unscale's parameters.
type unscaleArgs struct {
	Out driver.DevicePtr `c:"out"`
	N   int64            `c:"n"`
	F   driver.DevicePtr `c:"f"`
}

// searchAgreeArgs are fg_rad_search_agree_f64's parameters (the warm search
// against the cold one, for the tests).
type searchAgreeArgs struct {
	T     driver.DevicePtr `c:"t"`
	Off   driver.DevicePtr `c:"off"`
	Part  driver.DevicePtr `c:"part"`
	Guess driver.DevicePtr `c:"guess"`
	Tau   driver.DevicePtr `c:"tau"`
	N     int32            `c:"n"`
	Diff  driver.DevicePtr `c:"diff"`
}
