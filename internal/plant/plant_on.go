//go:build plantedbugs

package plant

import "sync/atomic"

var flags [numBugs]atomic.Bool

// Enabled reports whether bug b is planted (test builds with the
// plantedbugs tag only).
func Enabled(b Bug) bool { return b >= 0 && b < numBugs && flags[b].Load() }

// Set plants (on) or removes bug b. It exists only with the plantedbugs
// build tag.
func Set(b Bug, on bool) { flags[b].Store(on) }

// Available reports whether this build can plant bugs at all.
const Available = true
