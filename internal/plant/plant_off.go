//go:build !plantedbugs

package plant

// Enabled reports whether bug b is planted. Without the plantedbugs build
// tag it is always false.
func Enabled(Bug) bool { return false }

// Available reports whether this build can plant bugs at all.
const Available = false
