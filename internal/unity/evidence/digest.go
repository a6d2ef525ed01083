package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// ZeroDigest is the evidence-digest default: 64 zeros (facts §3).
var ZeroDigest = strings.Repeat("0", 64)

var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidDigest reports whether s is 64 lowercase hex digits.
func ValidDigest(s string) bool { return digestRE.MatchString(s) }

// FileDigest returns the lowercase hex SHA-256 of b, the return action's
// return-log-digest of the bytes it wrote.
func FileDigest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Digest returns the classifier's evidence-digest (facts §3): SHA-256 over
// "return" NUL <return-log bytes> NUL, then for each supplemental file, in
// read order, "supplemental-NNN" NUL <bytes> NUL, with NNN the file's
// zero-based index in three digits. It is not the hash of the return log
// alone, so a digest names the whole evidence set.
func Digest(returnLog []byte, supplemental [][]byte) string {
	h := sha256.New()
	h.Write([]byte("return\x00"))
	h.Write(returnLog)
	h.Write([]byte{0})
	for i, b := range supplemental {
		fmt.Fprintf(h, "supplemental-%03d\x00", i)
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
