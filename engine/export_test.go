package engine

// ApplyWorkers and ApplyDepth are applyWorkers and applyDepth, for the
// tests of their bounds.
const (
	ApplyWorkers = applyWorkers
	ApplyDepth   = applyDepth
)
