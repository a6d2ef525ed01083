// Package fileid is the operating-system layer the Unity evidence and editor
// actions share for files they must not be fooled about: a file's identity
// (device and inode, or volume serial and file index on Windows, plus size,
// link count and times), a root-down walk that refuses symbolic links and
// (on Windows) reparse points anywhere in a path, a no-follow open, and
// deletion by identity.
//
// Deletion by identity opens the object without following links, proves it
// is still the object that was classified (and lets the caller re-verify its
// content through the same handle), deletes it and asserts it is gone. On
// Unix it works relative to an open directory descriptor (openat, unlinkat)
// and checks that the inode it verified is the one that lost its last link;
// on Windows it opens a handle that denies writers and other deleters and
// deletes through that handle (FileDispositionInfo), so no other file can be
// deleted in its place.
//
// The Windows implementation compiles in CI (make cross) but its OS calls
// run only on a Windows runner (docs/actions.md lists them).
package fileid
