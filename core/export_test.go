package core

// SetStiffnessEstimate replaces the stiffness estimate the next flow starts
// with (tests of what happens when it is wrong).
func (s *Simulation) SetStiffnessEstimate(lambda float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stiff, s.stiffOK = lambda, true
}
