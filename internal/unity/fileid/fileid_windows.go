//go:build windows

package fileid

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// isReparsePoint reports FILE_ATTRIBUTE_REPARSE_POINT of p itself:
// GetFileAttributesW does not follow a final reparse point.
// https://learn.microsoft.com/windows/win32/fileio/reparse-points
func isReparsePoint(p string) (bool, error) {
	p16, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return false, err
	}
	attrs, err := windows.GetFileAttributes(p16)
	if err != nil {
		return false, &os.PathError{Op: "GetFileAttributes", Path: p, Err: err}
	}
	return attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0, nil
}

func filetime(ft windows.Filetime) int64 { return ft.Nanoseconds() }

func fromInfo(fi *windows.ByHandleFileInformation) Identity {
	reparse := fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
	dir := fi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0
	return Identity{
		Dev: uint64(fi.VolumeSerialNumber), Ino: uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow),
		Nlink: uint64(fi.NumberOfLinks), Size: int64(fi.FileSizeHigh)<<32 | int64(fi.FileSizeLow),
		ModTime: filetime(fi.LastWriteTime), ChangeTime: filetime(fi.CreationTime),
		Regular: !reparse && !dir, Dir: !reparse && dir,
	}
}

// open opens p without following a final reparse point. share is the
// sharing the caller tolerates from other openers.
func open(p string, access, share uint32) (windows.Handle, error) {
	p16, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return windows.InvalidHandle, err
	}
	h, err := windows.CreateFile(p16, access, share, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return windows.InvalidHandle, &os.PathError{Op: "CreateFile", Path: p, Err: err}
	}
	return h, nil
}

func info(h windows.Handle, p string) (Identity, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return Identity{}, &os.PathError{Op: "GetFileInformationByHandle", Path: p, Err: err}
	}
	return fromInfo(&fi), nil
}

// Lstat returns the identity of path without following a final reparse
// point.
func Lstat(path string) (Identity, error) {
	h, err := open(path, windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE)
	if err != nil {
		return Identity{}, err
	}
	defer windows.CloseHandle(h)
	return info(h, path)
}

// Stat returns the identity of an open file.
func Stat(f *os.File) (Identity, error) { return info(windows.Handle(f.Fd()), f.Name()) }

// OpenFile opens a regular file for reading without following a final
// reparse point, sharing it only with readers: while it is open nobody can
// write, rename or delete it (this is how the editor stays pinned between
// its signature check and its start).
func OpenFile(path string) (*os.File, error) {
	return openRegular(path, windows.FILE_SHARE_READ)
}

// OpenFileShared is OpenFile for a file another process may still be
// writing (a supplemental Unity log): writers and deleters are tolerated,
// and the caller's identity re-check after the read notices a change.
func OpenFileShared(path string) (*os.File, error) {
	return openRegular(path, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE)
}

func openRegular(path string, share uint32) (*os.File, error) {
	h, err := open(path, windows.GENERIC_READ, share)
	if err != nil {
		return nil, err
	}
	id, err := info(h, path)
	if err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	if !id.Regular {
		windows.CloseHandle(h)
		return nil, &Error{Code: CodeNotRegular, Path: path, Detail: "not a regular file (or a reparse point)"}
	}
	return os.NewFile(uintptr(h), path), nil
}

// setDelete marks the object behind h for deletion when h closes.
func setDelete(h windows.Handle, p string) error {
	b := byte(1) // FILE_DISPOSITION_INFO{DeleteFile: TRUE}
	if err := windows.SetFileInformationByHandle(h, windows.FileDispositionInfo, &b, 1); err != nil {
		return &os.PathError{Op: "SetFileInformationByHandle", Path: p, Err: err}
	}
	return nil
}

// DeleteFile deletes the regular file at path only if it is still the
// object want describes, unchanged, and verify (given the file opened
// through the same handle, positioned at 0) accepts it. The handle denies
// writers and other deleters, and the deletion goes through it.
func DeleteFile(path string, want Identity, verify func(*os.File) error) error {
	h, err := open(path, windows.GENERIC_READ|windows.DELETE, windows.FILE_SHARE_READ)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(h), path)
	got, err := info(h, path)
	if err != nil {
		f.Close()
		return err
	}
	if !got.Regular || !got.Unchanged(want) {
		f.Close()
		return &Error{Code: CodeIdentityChanged, Path: path, Detail: "the file is no longer the one that was classified"}
	}
	if verify != nil {
		if err := verify(f); err != nil {
			f.Close()
			return err
		}
	}
	if err := setDelete(h, path); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return assertAbsent(path)
}

// RemoveDir removes the empty directory at path only if it is still the
// object want names, deleting through the handle that proved it.
func RemoveDir(path string, want Identity) error {
	h, err := open(path, windows.FILE_READ_ATTRIBUTES|windows.DELETE, windows.FILE_SHARE_READ)
	if err != nil {
		return err
	}
	got, err := info(h, path)
	if err != nil {
		windows.CloseHandle(h)
		return err
	}
	if !got.Dir || !got.SameObject(want) {
		windows.CloseHandle(h)
		return &Error{Code: CodeIdentityChanged, Path: path, Detail: "the directory is no longer the one that was claimed"}
	}
	if err := setDelete(h, path); err != nil {
		windows.CloseHandle(h)
		return err
	}
	if err := windows.CloseHandle(h); err != nil {
		return err
	}
	return assertAbsent(path)
}

func assertAbsent(path string) error {
	_, err := Lstat(path)
	if err == nil {
		return &Error{Code: CodeStillPresent, Path: path, Detail: "the name still exists after deletion"}
	}
	if IsNotExist(err) { // ERROR_FILE_NOT_FOUND and ERROR_PATH_NOT_FOUND satisfy os.ErrNotExist
		return nil
	}
	return fmt.Errorf("assert %s is gone: %w", path, err)
}
