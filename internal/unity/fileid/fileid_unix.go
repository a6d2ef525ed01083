//go:build unix

package fileid

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

func isReparsePoint(string) (bool, error) { return false, nil }

func fromStat(st *unix.Stat_t) Identity {
	t := uint32(st.Mode) & unix.S_IFMT
	return Identity{
		Dev: uint64(st.Dev), Ino: st.Ino, Nlink: uint64(st.Nlink), Size: st.Size,
		ModTime: st.Mtim.Nano(), ChangeTime: st.Ctim.Nano(),
		Regular: t == unix.S_IFREG, Dir: t == unix.S_IFDIR,
	}
}

// Lstat returns the identity of path without following a final link.
func Lstat(path string) (Identity, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return Identity{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fromStat(&st), nil
}

// Stat returns the identity of an open file.
func Stat(f *os.File) (Identity, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Identity{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fromStat(&st), nil
}

// OpenFile opens a regular file for reading without following a final
// symbolic link (O_NOFOLLOW) and refuses anything but a regular file.
func OpenFile(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, &Error{Code: CodeLinkInPath, Path: path, Detail: "the file is a symbolic link"}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	id, err := Stat(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if !id.Regular {
		f.Close()
		return nil, &Error{Code: CodeNotRegular, Path: path, Detail: "not a regular file"}
	}
	// O_NONBLOCK only kept a FIFO from blocking the open; clear it.
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenFileShared is OpenFile; Unix has no share modes (on Windows it
// tolerates a concurrent writer).
func OpenFileShared(path string) (*os.File, error) { return OpenFile(path) }

func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// DeleteFile deletes the regular file at path only if it is still the
// object want describes, unchanged, and verify (given the file opened
// through the same descriptor, positioned at 0) accepts it. Afterwards the
// name must be gone and the verified inode must have lost its last link.
func DeleteFile(path string, want Identity, verify func(*os.File) error) error {
	dir, name := filepath.Split(path)
	dfd, err := openDir(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return &os.PathError{Op: "openat", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	got, err := Stat(f)
	if err != nil {
		return err
	}
	if !got.Regular || !got.Unchanged(want) {
		return &Error{Code: CodeIdentityChanged, Path: path, Detail: "the file is no longer the one that was classified"}
	}
	if verify != nil {
		if err := verify(f); err != nil {
			return err
		}
	}
	if err := unix.Unlinkat(dfd, name, 0); err != nil {
		return &os.PathError{Op: "unlinkat", Path: path, Err: err}
	}
	after, err := Stat(f)
	if err != nil {
		return err
	}
	if after.Nlink != 0 {
		return &Error{Code: CodeDeletedOtherFile, Path: path, Detail: fmt.Sprintf("the verified file still has %d links: another object was unlinked in its place", after.Nlink)}
	}
	return assertAbsent(dfd, name, path)
}

// RemoveDir removes the empty directory at path only if it is still the
// object want names, then asserts it is gone.
func RemoveDir(path string, want Identity) error {
	parent, name := filepath.Split(filepath.Clean(path))
	dfd, err := openDir(filepath.Clean(parent))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "fstatat", Path: path, Err: err}
	}
	if got := fromStat(&st); !got.Dir || !got.SameObject(want) {
		return &Error{Code: CodeIdentityChanged, Path: path, Detail: "the directory is no longer the one that was claimed"}
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "rmdir", Path: path, Err: err}
	}
	return assertAbsent(dfd, name, path)
}

func assertAbsent(dfd int, name, path string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "fstatat", Path: path, Err: err}
	}
	return &Error{Code: CodeStillPresent, Path: path, Detail: "the name still exists after deletion"}
}
