//go:build race

package node_test

// raceEnabled: under the race detector the long moderation races run a
// few rounds only; .ci/run runs them whole without it, over PostgreSQL.
const raceEnabled = true
