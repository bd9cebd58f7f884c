//go:build race

package vector

// raceEnabled shrinks the larger tests under the race detector.
const raceEnabled = true
