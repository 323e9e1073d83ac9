// Package core is the backend-agnostic physics runtime of fieldgo: lattices,
// fields in C memory shared through Apache Arrow, and (in later files) theories,
// flows and observables. core never imports a backend; it is handed a
// kernels.Backend.
package core
