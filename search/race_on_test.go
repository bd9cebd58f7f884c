//go:build race

package search

// raceEnabled shrinks the larger tests under the race detector.
const raceEnabled = true
