package core

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// history is a flow's table: one row per check and one at the end.
type history struct {
	densities []string
	step      []int64
	energy    []float64
	maxGrad   []float64
	integrals [][]float64 // per density
	resets    []int64
}

func newHistory(densities []string) history {
	return history{densities: append([]string(nil), densities...), integrals: make([][]float64, len(densities))}
}

func (h *history) len() int { return len(h.step) }

// record appends the flow's current state (once per step).
func (s *Simulation) record(fl *flowState) error {
	h := &fl.hist
	if n := h.len(); n > 0 && h.step[n-1] == int64(fl.step) {
		return nil
	}
	vals := make([]float64, len(h.densities))
	for k := range h.densities {
		v, err := s.prog.Density(s.grid, s.params, s.phiB, k, nil)
		if err != nil {
			return err
		}
		vals[k] = v
	}
	h.step = append(h.step, int64(fl.step))
	h.energy = append(h.energy, fl.last.Energy)
	h.maxGrad = append(h.maxGrad, fl.last.MaxGrad)
	for k, v := range vals {
		h.integrals[k] = append(h.integrals[k], v)
	}
	h.resets = append(h.resets, int64(fl.resets))
	return nil
}

// HistorySchema is the schema of a flow's history: step, energy, max_grad,
// one column per declared density integral, resets (cumulative velocity
// resets by the arrest test).
func HistorySchema(densities []string) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "energy", Type: arrow.PrimitiveTypes.Float64},
		{Name: "max_grad", Type: arrow.PrimitiveTypes.Float64},
	}
	for _, d := range densities {
		fields = append(fields, arrow.Field{Name: d, Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "resets", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

func (h *history) recordBatch() arrow.RecordBatch {
	b := array.NewRecordBuilder(Allocator, HistorySchema(h.densities))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(h.step, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(h.energy, nil)
	b.Field(2).(*array.Float64Builder).AppendValues(h.maxGrad, nil)
	for k := range h.densities {
		b.Field(3+k).(*array.Float64Builder).AppendValues(h.integrals[k], nil)
	}
	b.Field(3+len(h.densities)).(*array.Int64Builder).AppendValues(h.resets, nil)
	return b.NewRecordBatch()
}

// HistoryRows is the number of rows of the current flow's history, -1
// without a flow. A flow's history only grows, so the same flow with as
// many rows has the same history: a caller holding an earlier copy of it
// can tell whether it still holds all of it without History's copy.
func (s *Simulation) HistoryRows() (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if s.flow == nil {
		return -1, nil
	}
	return s.flow.hist.len(), nil
}

// History returns the current flow's history as a RecordBatch in C memory;
// the caller releases it.
func (s *Simulation) History() (arrow.RecordBatch, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if s.flow == nil {
		h := newHistory(s.theory.Spec.Densities)
		return h.recordBatch(), nil
	}
	return s.flow.hist.recordBatch(), nil
}
