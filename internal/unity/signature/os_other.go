//go:build !windows && !darwin

package signature

// OSVerifier returns nil: this platform has no supported editor signature
// check.
func OSVerifier(string) Verifier { return nil }
