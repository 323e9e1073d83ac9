package gpuradiation

import "github.com/fieldgo/fieldgo/kernels/cuda"

// SearchAgreeArgs are fg_rad_search_agree_f64's parameters for the external
// tests: knots t, their ranges off, per query the particle part, the guess
// and the time tau, n queries, the differences into diff.
func SearchAgreeArgs(t, off, part, guess, tau *cuda.DeviceBuffer, n int, diff *cuda.DeviceBuffer) any {
	return &searchAgreeArgs{T: t.Addr(), Off: off.Addr(), Part: part.Addr(), Guess: guess.Addr(), Tau: tau.Addr(), N: int32(n), Diff: diff.Addr()}
}
