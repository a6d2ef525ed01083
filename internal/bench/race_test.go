//go:build race

package bench

// raceEnabled: under the race detector (make test) TestWorkloads runs the
// smoke subset only; `make bench` runs every workload without it.
const raceEnabled = true
