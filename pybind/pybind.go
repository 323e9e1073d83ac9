// Package pybind is the one gopy-wrapped package.
package pybind

func Version() string { return "0.1.0" }

func Add(a, b float64) (float64, error) { return a + b, nil }
