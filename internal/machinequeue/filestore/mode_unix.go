//go:build unix

package filestore

import (
	"os"
	"syscall"
)

// noFollow refuses a symbolic link planted at the lock or state path.
const noFollow = syscall.O_NOFOLLOW

// shareMode makes a new state file readable by every runner agent account
// that shares the directory's group (CreateTemp makes it 0600); the umask
// does not apply to fchmod, so the directory's permissions decide.
func shareMode(f *os.File) error { return f.Chmod(0o664) }
