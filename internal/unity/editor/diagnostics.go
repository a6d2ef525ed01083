package editor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Diagnostics record vocabulary.
const (
	// ClassificationSuccess is the only finalClassification that yields an
	// editor path.
	ClassificationSuccess = "success"
	// ClassificationFailure is recorded when validation failed.
	ClassificationFailure = "failure"
	// RecordSchemaVersion versions our record.
	RecordSchemaVersion = 1
	// Validator names what wrote the record.
	Validator = "ambiguous-organization-build-lock ensure-unity-editor (validates; never installs)"
	// DefaultDiagnosticsName is the file used when diagnostics-path is a
	// directory or has no extension.
	DefaultDiagnosticsName = "ensure-editor-summary.json"
)

// Record is the diagnostics record ensure-unity-editor writes. The fields
// the reference checks are unityVersion, provisioningProfile, installRoot,
// ciManagedOnly, finalClassification and editorPath; the rest is evidence
// for operators.
type Record struct {
	SchemaVersion          int          `json:"schemaVersion"`
	Validator              string       `json:"validator"`
	UnityVersion           string       `json:"unityVersion"`
	ProvisioningProfile    string       `json:"provisioningProfile"`
	InstallRoot            string       `json:"installRoot"`
	CIManagedOnly          bool         `json:"ciManagedOnly"`
	RequireHealthyExisting bool         `json:"requireHealthyExisting"`
	FinalClassification    string       `json:"finalClassification"`
	EditorPath             string       `json:"editorPath"`
	Layout                 string       `json:"layout,omitempty"`
	SignerThumbprint       string       `json:"signerThumbprint,omitempty"`
	ModuleGroups           []GroupProof `json:"moduleGroups"`
	RequiredPayload        []string     `json:"requiredPayload"`
	Failure                string       `json:"failure,omitempty"`
}

// Encode renders r as indented JSON with a trailing newline.
func (r Record) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Expect is what a record must say.
type Expect struct {
	UnityVersion  string
	Profile       Profile
	InstallRoot   string
	CIManagedOnly bool
	// Candidates are the managed editor paths (see Candidates); under
	// CIManagedOnly editorPath must equal one of them.
	Candidates []string
	// Windows compares paths case-insensitively.
	Windows bool
}

// ErrRecord marks every record refusal.
var ErrRecord = errors.New("diagnostics record refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRecord, fmt.Sprintf(format, args...))
}

// ValidateRecord decodes raw strictly (unknown fields and trailing data
// refused) and checks every field the reference checks (facts §4). It
// returns the record only when it proves a usable editor.
func ValidateRecord(raw []byte, want Expect) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, refuse("malformed JSON: %v", err)
	}
	if dec.More() {
		return Record{}, refuse("trailing data after the record")
	}
	eq := func(a, b string) bool {
		if want.Windows {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	switch {
	case r.UnityVersion != want.UnityVersion:
		return Record{}, refuse("unityVersion does not match the requested version")
	case r.ProvisioningProfile != string(want.Profile):
		return Record{}, refuse("provisioningProfile does not match the requested profile")
	case !eq(normalizeRoot(r.InstallRoot), normalizeRoot(want.InstallRoot)):
		return Record{}, refuse("installRoot does not match the requested install root")
	case r.CIManagedOnly != want.CIManagedOnly:
		return Record{}, refuse("ciManagedOnly does not match the requested value")
	case r.FinalClassification != ClassificationSuccess:
		return Record{}, refuse("finalClassification is not success")
	}
	if err := CheckEditorPath(r.EditorPath); err != nil {
		return Record{}, err
	}
	if want.CIManagedOnly && !slices.ContainsFunc(want.Candidates, func(c string) bool { return eq(c, r.EditorPath) }) {
		return Record{}, refuse("editorPath is not one of the managed layouts <root>/<version>/Editor/Unity.exe or <root>/%s/<version>/Editor/Unity.exe", CIManagedDir)
	}
	return r, nil
}

// CheckEditorPath refuses an editor path that is not absolute or holds
// whitespace other than a plain space, a line break or NUL (facts §4: the
// path becomes a step output).
func CheckEditorPath(p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return refuse("editorPath is not an absolute path")
	}
	for _, r := range p {
		if r == 0 || (unicode.IsSpace(r) && r != ' ') {
			return refuse("editorPath holds a line break, NUL or whitespace other than a plain space")
		}
	}
	return nil
}

func normalizeRoot(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// DiagnosticsPath resolves diagnostics-path (facts §4): empty means
// <install root>/_diagnostics/<version>-provisioning-summary.json; a path
// that is an existing directory (isDir) or has no extension means
// <path>/ensure-editor-summary.json; a relative path is relative to base
// (the workspace).
func DiagnosticsPath(raw, installRoot, version, base string, isDir func(string) bool) string {
	if raw == "" {
		return filepath.Join(installRoot, "_diagnostics", version+"-provisioning-summary.json")
	}
	p := raw
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	if filepath.Ext(p) == "" || isDir(p) {
		return filepath.Join(p, DefaultDiagnosticsName)
	}
	return p
}
