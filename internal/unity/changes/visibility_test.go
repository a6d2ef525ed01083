package changes_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

func TestVisibleThroughLinks(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		links   map[string]string
		roots   []string
		unsure  string
		covered map[string]bool
	}{
		"no links": {roots: nil, covered: map[string]bool{"docs/a.cs": false}},
		"a link under Assets to an allowlisted folder": {
			links: map[string]string{"Assets/Docs": "../docs"}, roots: []string{"docs"},
			covered: map[string]bool{"docs/Foo.cs": true, "docs": true, "docsx/a": false, "DOCS/Foo.cs": true},
		},
		"a link to a single file": {
			links: map[string]string{"Assets/Readme.cs": "../README.md"}, roots: []string{"README.md"},
			covered: map[string]bool{"README.md": true, "README.mdx": false},
		},
		"a chain through a link outside Assets": {
			links: map[string]string{"Assets/A": "../x/inner", "x": "progress"}, roots: []string{"progress/inner"},
			covered: map[string]bool{"progress/inner/a.cs": true, "progress/other.txt": false},
		},
		"a link inside a visible folder is followed": {
			links: map[string]string{"Assets/Docs": "../docs", "docs/more": "../.llm"}, roots: []string{".llm", "docs"},
			covered: map[string]bool{".llm/notes.cs": true},
		},
		"a link outside the Unity roots alone changes nothing": {
			links: map[string]string{"docs/assets": "../Assets"}, roots: nil, covered: map[string]bool{"docs/a.cs": false},
		},
		"the Assets folder itself is a link": {
			links: map[string]string{"Assets": "progress/game"}, roots: []string{"progress/game"},
		},
		"Windows separators": {
			links: map[string]string{`Packages/com.x`: `..\docs\pkg`}, roots: []string{"docs/pkg"},
		},
		"a link staying inside Assets": {links: map[string]string{"Assets/A": "B"}, roots: nil},
		"an absolute target":           {links: map[string]string{"Assets/A": "/opt/shared"}, unsure: "absolute target"},
		"a drive-letter target":        {links: map[string]string{"Assets/A": `C:\shared`}, unsure: "absolute target"},
		"a target leaving the repository": {
			links: map[string]string{"Assets/A": "../../elsewhere"}, unsure: "leaves the repository",
		},
		"the repository itself": {links: map[string]string{"Assets/Root": ".."}, unsure: "repository itself"},
		"a loop":                {links: map[string]string{"Assets/A": "../x", "x": "y", "y": "x"}, unsure: "chain of more than"},
		"a Packages folder that is a link": {
			links: map[string]string{"Packages": "shared/Packages"}, unsure: "the Packages folder is the symbolic link",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := changes.Visible(changes.Tree{Links: tc.links})
			if tc.unsure != "" {
				assert.Contains(t, v.Unsure, tc.unsure)
				return
			}
			require.Empty(t, v.Unsure)
			var got []string
			for _, r := range v.Roots {
				got = append(got, r.Path)
				assert.NotEmpty(t, r.Via)
			}
			assert.Equal(t, tc.roots, got)
			for p, want := range tc.covered {
				_, ok := v.Covers(p)
				assert.Equal(t, want, ok, "%q", p)
			}
		})
	}
}

func TestVisibleLocalPackages(t *testing.T) {
	t.Parallel()
	manifest := `{"dependencies":{"com.unity.ugui":"2.0.0","com.acme.docs":"file:../docs/acme-package","com.acme.tar":"file:../progress/pkg.tgz",
		"com.acme.inside":"file:com.acme.inside","com.acme.git":"https://github.com/acme/x.git?path=/pkg"},"scopedRegistries":[]}`
	v := changes.Visible(changes.Tree{Manifest: []byte(manifest)})
	require.Empty(t, v.Unsure)
	var got []string
	for _, r := range v.Roots {
		got = append(got, r.Path+" via "+r.Via)
	}
	assert.Equal(t, []string{"docs/acme-package via local package com.acme.docs (file:../docs/acme-package)",
		"progress/pkg.tgz via local package com.acme.tar (file:../progress/pkg.tgz)"}, got)
	_, ok := v.Covers("docs/acme-package/Runtime/Acme.cs")
	assert.True(t, ok)

	// A local package reached through a link, and links inside it.
	v = changes.Visible(changes.Tree{Manifest: []byte(`{"dependencies":{"a":"file:../vendor/a"}}`),
		Links: map[string]string{"vendor": "docs/vendor", "docs/vendor/a/Extra": "../../../progress/extra"}})
	require.Empty(t, v.Unsure)
	_, ok = v.Covers("docs/vendor/a/x.cs")
	assert.True(t, ok)
	_, ok = v.Covers("progress/extra/y.cs")
	assert.True(t, ok)

	for manifest, unsure := range map[string]string{
		`{"dependencies":{"a":"file:/opt/pkg"}}`:    "absolute target",
		`{"dependencies":{"a":"file:///opt/pkg"}}`:  "absolute target",
		`{"dependencies":{"a":"file:../../x"}}`:     "leaves the repository",
		`{"dependencies":{"a":"file:.."}}`:          "repository itself",
		`{"dependencies":{"a":"file:../my%20pkg"}}`: "% escapes",
		`{"dependencies":{"a":7}}`:                  "not a string",
		`{"dependencies":`:                          "not the JSON object",
		`[]`:                                        "not the JSON object",
	} {
		v := changes.Visible(changes.Tree{Manifest: []byte(manifest)})
		assert.Contains(t, v.Unsure, unsure, manifest)
	}
	assert.Contains(t, changes.Visible(changes.Tree{ManifestUnusual: "is a symbolic link"}).Unsure, "Packages/manifest.json is a symbolic link")
}

// Properties over random trees of links: Visible terminates; no root lies
// under a Unity root; a link under Assets whose target is a plain relative
// path through no other link makes that target visible (or the result is
// unsure); and adding a link never removes a root nor clears Unsure.
func TestVisibleProperties(t *testing.T) {
	t.Parallel()
	segs := []string{"Assets", "Packages", "docs", "progress", ".llm", "x", "y", "..", ".", "a"}
	relPath := rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 4).Draw(t, "n")
		parts := make([]string, n)
		for i := range parts {
			parts[i] = rapid.SampledFrom(segs).Draw(t, "seg")
		}
		return strings.Join(parts, "/")
	})
	rapid.Check(t, func(t *rapid.T) {
		links := map[string]string{}
		for range rapid.IntRange(0, 6).Draw(t, "links") {
			p := rapid.SampledFrom([]string{"Assets/L", "Assets/M/N", "Packages/P", "docs/l", "x", "y", "progress/q"}).Draw(t, "path")
			links[p] = relPath.Draw(t, "target")
		}
		v := changes.Visible(changes.Tree{Links: links})
		for _, r := range v.Roots {
			for _, u := range changes.UnityRoots {
				if strings.HasPrefix(strings.ToLower(r.Path+"/"), strings.ToLower(u)) {
					t.Fatalf("root %q is under %s", r.Path, u)
				}
			}
		}
		more := map[string]string{}
		for k, val := range links {
			more[k] = val
		}
		more["Assets/Z"] = relPath.Draw(t, "extra")
		w := changes.Visible(changes.Tree{Links: more})
		if v.Unsure != "" && w.Unsure == "" {
			t.Fatalf("a new link cleared unsure %q", v.Unsure)
		}
		if w.Unsure == "" {
			for _, r := range v.Roots {
				if _, ok := w.Covers(r.Path); !ok {
					t.Fatalf("adding a link lost root %q", r.Path)
				}
			}
		}
	})
}

func FuzzVisible(f *testing.F) {
	f.Add("Assets/A", "../docs", `{"dependencies":{"a":"file:../docs/a"}}`)
	f.Add("Assets", "x/../../y", `{`)
	f.Fuzz(func(t *testing.T, link, target, manifest string) {
		v := changes.Visible(changes.Tree{Links: map[string]string{link: target, "x": "Assets/" + target}, Manifest: []byte(manifest)})
		if v.Unsure == "" {
			for _, r := range v.Roots {
				if r.Path == "" || strings.HasPrefix(r.Path, "/") || strings.Contains("/"+r.Path+"/", "/../") {
					t.Fatalf("root %q escapes", r.Path)
				}
			}
		}
	})
}
