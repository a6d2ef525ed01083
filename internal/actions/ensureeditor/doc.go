// Package ensureeditor is the ensure-unity-editor action
// (reference-behavior §1.14, unity-lifecycle-facts §4): it validates a
// runner-owned Unity editor natively in Go and outputs editor-path only when
// every check passed and the diagnostics record it wrote re-validates.
//
// It checks, in order: the platform (Windows only; checked before the
// inputs), the inputs (untrimmed text, strict booleans, the
// with-windows-il2cpp alias), the managed layout (<root>/<version>/Editor/
// Unity.exe, then <root>/_ci-managed-editors/<version>/Editor/Unity.exe),
// no link or reparse point in the editor's path, the editor's signature
// (shared with return-unity-license), every module group of the profile
// proven on disk, and every required payload path present.
//
// Deliberate divergence: the reference also provisions missing editors
// through Unity's installer. This action never installs anything; a missing
// editor fails with the exact paths it looked at and a pointer to the
// provisioning docs.
package ensureeditor
