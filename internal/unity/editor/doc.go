// Package editor holds the rules of a runner-owned Unity editor
// (unity-lifecycle-facts §2 and §4): the managed layout an editor path is
// derived from, the provisioning profiles and the module groups each must
// prove on disk, the required-payload list, and the diagnostics record
// ensure-unity-editor writes and re-validates before it outputs editor-path.
//
// The rules work on an fs.FS and plain values, so they are table-tested on
// Linux with in-memory trees; the action (internal/actions/ensureeditor)
// hands them os.DirFS views of the real editor. Safety rules:
//
//   - An editor path is never supplied by a consumer: it is derived from a
//     root, a validated version and one of two layouts.
//   - A module group is proven only by a regular file that exists; an empty
//     directory, a missing file or a symbolic link proves nothing.
//   - A diagnostics record is trusted only when every field the reference
//     checks matches what was asked for and its classification is success.
package editor
