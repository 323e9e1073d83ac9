package cuda

// SetFlowFallback is a test hook: flows that p builds from now on take the
// flow's fallback path as if the fused kernels could not launch. Level 0 is
// the normal choice; 1 runs stages 2-3 by fg_k_tile and stage 4 with the
// update by fg_k_tile_up (no fg_k_stages234); 2 runs stages 2-4 by fg_k_tile
// and the update by fg_k_update, in place (neither fused kernel).
func SetFlowFallback(p *Program, level int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noFused234, p.noFusedUpdate = level >= 1, level >= 2
}
