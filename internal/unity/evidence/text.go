package evidence

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"
)

// Bounds of the classifier's reads (facts §3). The return action caps the
// command output at MaxFileBytes too, so a log it writes always fits.
const (
	// MaxFileBytes bounds one evidence file (25 MiB).
	MaxFileBytes = 25 << 20
	// MaxTotalBytes bounds all evidence files together (25 MiB).
	MaxTotalBytes = 25 << 20
	// MaxFiles bounds the number of evidence files read.
	MaxFiles = 256
	// MaxEntries bounds the directory entries visited under supplemental
	// directories.
	MaxEntries = 4096
)

// Text decoding failures (each makes a supplemental file incomplete and the
// return log unreadable).
var (
	ErrInvalidUTF8 = errors.New("evidence: not valid UTF-8")
	ErrNUL         = errors.New("evidence: contains a NUL character")
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// DecodeText decodes evidence bytes strictly: one leading UTF-8 byte order
// mark is stripped, invalid UTF-8 and NUL are refused.
func DecodeText(b []byte) (string, error) {
	b = bytes.TrimPrefix(b, bom)
	if !utf8.Valid(b) {
		return "", ErrInvalidUTF8
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", ErrNUL
	}
	return string(b), nil
}

// EntryLimitReached reports whether visiting the n-th directory entry
// (1-based) under the supplemental paths reaches the entry limit: the
// MaxEntries-th entry does (facts §3: capture is incomplete when "the entry
// limit is reached"), so at most MaxEntries-1 entries are visited.
func EntryLimitReached(n int) bool { return n >= MaxEntries }

// WalkReads reports whether a directory walk reads the file named name:
// its extension, as Node.js's path.extname sees it, is .log or .txt in any
// case. A dot file such as ".log" has no extension there (the reference
// skips it), while "..log" and "a.LOG" have one.
func WalkReads(name string) bool {
	switch strings.ToLower(NodeExt(name)) {
	case ".log", ".txt":
		return true
	}
	return false
}

// NodeExt returns the extension of the base name name as Node.js's
// path.extname returns it: from the last dot to the end, or "" when the
// name has no dot, its only dot is the first character, or it is "..".
func NodeExt(name string) string {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || name == ".." {
		return ""
	}
	return name[dot:]
}
