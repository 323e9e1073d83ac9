package cuda_test

import (
	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// The CUDA Program forms the unit-vector RK4's centripetal term on the
// device (fg_k_centripetal, fg_k_nd_centripetal).
var _ core.CentripetalProgram = (*cuda.Program)(nil)
