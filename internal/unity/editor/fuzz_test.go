package editor_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
)

// FuzzParsePayloadList: an accepted list never holds an absolute, padded,
// dot-dot or duplicate entry.
func FuzzParsePayloadList(f *testing.F) {
	for _, s := range []string{"Data/a.dll\n", "a\r\nb", "a\n\nb", "/abs", `C:\x`, "a/../b", "A\na", "x\x00y", " a", "a\\b\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := editor.ParsePayloadList(raw)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || p != strings.TrimSpace(p) || strings.ContainsAny(p, "\\\r\n\x00") || strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':') {
				t.Fatalf("accepted %q", p)
			}
			for _, seg := range strings.Split(p, "/") {
				if seg == ".." || seg == "." || seg == "" {
					t.Fatalf("accepted segment %q in %q", seg, p)
				}
			}
			k := strings.ToLower(p)
			if seen[k] {
				t.Fatalf("duplicate %q", p)
			}
			seen[k] = true
		}
	})
}

// FuzzValidateRecord: an accepted record always names one of the managed
// candidates with a clean absolute path and a success classification.
func FuzzValidateRecord(f *testing.F) {
	root := filepath.FromSlash("/r/u6-v3")
	good, _ := goodRecord(root).Encode()
	f.Add(good)
	f.Add([]byte(`{"unityVersion":"6000.0.58f2"}`))
	f.Add([]byte(`{}`))
	cands, _ := editor.Candidates(root, "6000.0.58f2", "windows")
	want := editor.Expect{UnityVersion: "6000.0.58f2", Profile: editor.ProfileFull, InstallRoot: root, CIManagedOnly: true, Candidates: cands}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := editor.ValidateRecord(raw, want)
		if err != nil {
			return
		}
		if r.FinalClassification != "success" || (r.EditorPath != cands[0] && r.EditorPath != cands[1]) || editor.CheckEditorPath(r.EditorPath) != nil {
			t.Fatalf("accepted %+v", r)
		}
	})
}
