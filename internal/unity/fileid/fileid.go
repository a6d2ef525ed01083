package fileid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Identity is what proves two looks at a path saw the same, unchanged
// object.
type Identity struct {
	// Dev and Ino name the object: st_dev/st_ino on Unix, the volume serial
	// number and file index on Windows.
	Dev, Ino uint64
	// Nlink is the hard-link count.
	Nlink uint64
	// Size is the size in bytes.
	Size int64
	// ModTime and ChangeTime are nanosecond timestamps (Unix mtime and
	// ctime; Windows last-write and creation time).
	ModTime, ChangeTime int64
	// Regular and Dir give the object's type; both false for anything else
	// (a link, a device, a reparse point).
	Regular, Dir bool
}

// SameObject reports whether a and b are the same file system object.
func (a Identity) SameObject(b Identity) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// Unchanged reports whether a and b are the same object with the same type,
// size, link count and times.
func (a Identity) Unchanged(b Identity) bool { return a == b }

// Codes of an *Error.
const (
	CodeLinkInPath       = "link-in-path"
	CodeNotRegular       = "not-a-regular-file"
	CodeIdentityChanged  = "identity-changed"
	CodeStillPresent     = "still-present"
	CodeUnsupportedPath  = "unsupported-path"
	CodeDeletedOtherFile = "deleted-other-object"
)

// Error is a refusal with a stable Code; Path is the path component
// concerned.
type Error struct {
	Code, Path, Detail string
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Code, e.Detail, e.Path)
}

// ReasonCode returns Code (the ::error title and the job summary's code).
func (e *Error) ReasonCode() string { return e.Code }

// ErrNotExist is returned (wrapped) when a path does not exist.
var ErrNotExist = os.ErrNotExist

// CheckAncestry lstat-walks path from the file system root down and refuses
// it when any component, the last included, is a symbolic link or, on
// Windows, carries FILE_ATTRIBUTE_REPARSE_POINT (junctions, mount points,
// cloud placeholders). path must be absolute. A missing component returns an
// error wrapping os.ErrNotExist.
func CheckAncestry(path string) error {
	if !filepath.IsAbs(path) {
		return &Error{Code: CodeUnsupportedPath, Path: path, Detail: "path is not absolute"}
	}
	clean := filepath.Clean(path)
	vol := filepath.VolumeName(clean)
	rest := strings.TrimPrefix(clean[len(vol):], string(filepath.Separator))
	cur := vol + string(filepath.Separator)
	if err := checkComponent(cur); err != nil {
		return err
	}
	if rest == "" {
		return nil
	}
	for _, part := range strings.Split(rest, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		if err := checkComponent(cur); err != nil {
			return err
		}
	}
	return nil
}

func checkComponent(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return &Error{Code: CodeLinkInPath, Path: p, Detail: "a path component is a symbolic link"}
	}
	reparse, err := isReparsePoint(p)
	if err != nil {
		return err
	}
	if reparse {
		return &Error{Code: CodeLinkInPath, Path: p, Detail: "a path component is a reparse point"}
	}
	return nil
}

// IsNotExist reports whether err says a path does not exist.
func IsNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
