//go:build race

package ghsource_test

const raceEnabled = true
