package engine

// ApplyWorkers is applyWorkers, for the tests of its bound.
const ApplyWorkers = applyWorkers
