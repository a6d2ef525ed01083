package editor

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Layout names where under a root the editor of a version lives.
type Layout string

// The two managed layouts (facts §2, §4).
const (
	// LayoutCanonical is <root>/<version>/Editor/Unity.exe.
	LayoutCanonical Layout = "canonical"
	// LayoutCIManagedAlternate is <root>/_ci-managed-editors/<version>/Editor/Unity.exe.
	LayoutCIManagedAlternate Layout = "ci-managed-alternate"
	// CIManagedDir is the alternate layout's directory under the root.
	CIManagedDir = "_ci-managed-editors"
	// ToolCacheDir is the directory under the runner tool cache that holds
	// the managed editors the license return uses: <tool-cache>/u6-v3.
	ToolCacheDir = "u6-v3"
)

// Layouts lists the layouts in preference order.
var Layouts = []Layout{LayoutCanonical, LayoutCIManagedAlternate}

// ParseLayout validates an editor-layout value.
func ParseLayout(s string) (Layout, bool) {
	for _, l := range Layouts {
		if string(l) == s {
			return l, true
		}
	}
	return "", false
}

var (
	// ReturnVersionRE is return-unity-license's unity-version rule,
	// case-insensitive as in the reference (6000.0.1F1 passes).
	ReturnVersionRE = regexp.MustCompile(`(?i)^[0-9]{4}\.[0-9]+\.[0-9]+[abfp][0-9]+$`)
	// EnsureVersionRE is ensure-unity-editor's rule: a final release.
	EnsureVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+f[0-9]+$`)
)

// executable returns the editor executable's path below a version
// directory on goos. The Windows layout is the reference's; the macOS one
// (Unity.app/Contents/MacOS/Unity, the Mach-O codesign checks) is
// unreviewed and unused while the Darwin return is refused by policy.
func executable(goos string) []string {
	if goos == "darwin" {
		return []string{"Unity.app", "Contents", "MacOS", "Unity"}
	}
	return []string{"Editor", "Unity.exe"}
}

// ManagedPath returns the editor executable of version under root in
// layout, for goos.
func ManagedPath(root, version string, layout Layout, goos string) (string, error) {
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("editor root must be absolute")
	}
	parts := []string{filepath.Clean(root)}
	switch layout {
	case LayoutCanonical:
	case LayoutCIManagedAlternate:
		parts = append(parts, CIManagedDir)
	default:
		return "", fmt.Errorf("unknown editor layout")
	}
	if strings.ContainsAny(version, `/\`) || version == "." || version == ".." || version == "" {
		return "", fmt.Errorf("invalid editor version")
	}
	parts = append(append(parts, version), executable(goos)...)
	return filepath.Join(parts...), nil
}

// Candidates returns the managed editor paths of version under root, in
// layout preference order.
func Candidates(root, version, goos string) ([]string, error) {
	var out []string
	for _, l := range Layouts {
		p, err := ManagedPath(root, version, l, goos)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
