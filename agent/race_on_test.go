//go:build race

package agent

// raceEnabled: the race detector allocates on its own, so byte counts
// of allocations mean nothing under it.
const raceEnabled = true
