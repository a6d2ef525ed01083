// Package testexec writes executables that a test then runs, in a process
// whose parallel tests fork children at the same time.
//
// A child forked while this process holds an executable open for writing
// inherits the descriptor until its own exec, and running the executable
// in that window fails with "text file busy" (ETXTBSY; golang/go#22315).
// Copy and WriteFile hold syscall.ForkLock for writing from open to close, so no
// fork of this process can happen while the descriptor is open.
package testexec

import (
	"bytes"
	"io"
	"os"
	"syscall"
)

// Copy creates path (which must not exist) with mode perm and the content
// of r, holding syscall.ForkLock while the file is open for writing.
func Copy(path string, r io.Reader, perm os.FileMode) error {
	return write(path, r, perm, os.O_EXCL)
}

// WriteFile is os.WriteFile holding syscall.ForkLock while the file is
// open for writing.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, bytes.NewReader(data), perm, os.O_TRUNC)
}

func write(path string, r io.Reader, perm os.FileMode, flag int) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
