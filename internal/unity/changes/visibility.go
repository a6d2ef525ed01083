package changes

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// UnityRoots are the directories of a Unity project Unity reads: the
// scripts and assets it imports and compiles, its packages and settings.
// A symbolic link committed under one of them makes its target visible to
// Unity, wherever the target lives.
var UnityRoots = []string{"Assets/", "Packages/", "ProjectSettings/"}

// ManifestPath is the Unity package manifest, whose "file:" dependencies
// are local packages Unity compiles from wherever they live
// (https://docs.unity3d.com/Manual/upm-localpath.html: a relative path is
// relative to the Packages folder).
const ManifestPath = "Packages/manifest.json"

// Bounds of the visibility check: beyond them it is unsure, and Unity is
// required.
const (
	// MaxLinks bounds the symbolic links of a tree.
	MaxLinks = 10000
	// MaxLinkTarget bounds one link's target (Windows' and Linux's path
	// limits are below it).
	MaxLinkTarget = 4096
	// MaxManifestBytes bounds Packages/manifest.json.
	MaxManifestBytes = 1 << 20
	// maxHops bounds the links followed while resolving one path (Linux's
	// MAXSYMLINKS is 40).
	maxHops = 40
)

// Tree is what the visibility check needs of the head commit of a pull
// request: every symbolic link, and the package manifest.
type Tree struct {
	// Links maps the path of every symbolic link (git mode 120000) to its
	// target as committed.
	Links map[string]string
	// Manifest is Packages/manifest.json's content; nil when the tree has
	// none.
	Manifest []byte
	// ManifestUnusual is set when Packages/manifest.json is something the
	// check cannot read as the manifest Unity reads (a symbolic link, a
	// submodule, a directory, or over MaxManifestBytes); it says what.
	ManifestUnusual string
	// Problem is set when the tree could not be read completely (a link
	// whose target is missing or over MaxLinkTarget); it says what.
	Problem string
}

// Root is a path of the tree Unity reads although it lies outside the
// Unity roots, and why.
type Root struct {
	// Path is repository-relative, without a trailing slash: a directory
	// (everything under it is visible) or a file.
	Path string
	// Via says how Unity reaches it: a link or a local package.
	Via string
}

// Visibility is what Unity reads outside the Unity roots.
type Visibility struct {
	// Roots are the visible paths, sorted.
	Roots []Root
	// Unsure, when set, says why visibility could not be decided (an
	// absolute or escaping link target, a link loop, a manifest that is
	// not JSON...): nothing can then be proven Unity-independent.
	Unsure string
}

// Covers returns the root that makes path visible to Unity, if any: a
// path under a visible root, or under a case variant of a Unity root
// ("assets/x" is Assets/x on a case-insensitive checkout). Paths compare
// case-insensitively (ASCII and simple folding, as strings.EqualFold
// does): on the Windows and macOS runners Unity runs on, a link target that
// differs from the tree only in case still reaches it, and reading more as
// visible only ever requires Unity.
func (v Visibility) Covers(p string) (Root, bool) {
	if inUnityRoot(p) {
		// Only a case variant gets here (Assets/ itself is never
		// independent): on a case-insensitive checkout it is the Unity root.
		return Root{Path: p, Via: "a case variant of a Unity root (" + strings.Join(UnityRoots, ", ") + ")"}, true
	}
	for _, r := range v.Roots {
		if len(p) >= len(r.Path) && strings.EqualFold(p[:len(r.Path)], r.Path) && (len(p) == len(r.Path) || p[len(r.Path)] == '/') {
			return r, true
		}
	}
	return Root{}, false
}

// inUnityRoot reports whether p lies under a Unity root (case-insensitively).
func inUnityRoot(p string) bool {
	for _, r := range UnityRoots {
		if len(p) >= len(r) && strings.EqualFold(p[:len(r)], r) {
			return true
		}
	}
	return false
}

// Visible computes what Unity reads outside its roots in t: the target of
// every symbolic link under a Unity root (or that is one), every local
// package the manifest names, and, transitively, the targets of links
// inside those. Targets are resolved as the file system resolves them on
// the runner: relative to the link's directory, ".." going up, every link
// met on the way followed. A target that is absolute, leaves the
// repository, is the repository itself or loops, a manifest that cannot be
// read, or a tree beyond the bounds makes the result Unsure.
func Visible(t Tree) Visibility {
	if len(t.Links) > MaxLinks {
		return Visibility{Unsure: fmt.Sprintf("the tree has more than %d symbolic links", MaxLinks)}
	}
	if t.Problem != "" {
		return Visibility{Unsure: t.Problem}
	}
	for l := range t.Links {
		if strings.EqualFold(l, path.Dir(ManifestPath)) {
			return Visibility{Unsure: fmt.Sprintf("the Packages folder is the symbolic link %s, so the manifest Unity reads is not %s", DisplayPath(l), ManifestPath)}
		}
	}
	w := walker{r: resolver{links: t.Links}, links: t.Links, roots: map[string]string{}, visited: map[string]bool{}}
	var start []string
	for l := range t.Links {
		if inUnityRoot(l + "/") {
			start = append(start, l)
		}
	}
	sort.Strings(start)
	for _, l := range start {
		w.visited[l] = true
	}
	w.queue = start
	if why := w.drain(); why != "" {
		return Visibility{Unsure: why}
	}
	if t.ManifestUnusual != "" {
		return Visibility{Unsure: ManifestPath + " " + t.ManifestUnusual}
	}
	if t.Manifest != nil {
		pkgs, why := localPackages(t.Manifest)
		if why != "" {
			return Visibility{Unsure: ManifestPath + " " + why}
		}
		for _, pkg := range pkgs {
			target, why := w.r.resolve(path.Dir(ManifestPath), pkg.path)
			if why == "" && target == "" {
				why = "is the repository itself"
			}
			if why == "" && strings.Contains(pkg.path, "%") {
				why = "is written with % escapes, which this check does not decode"
			}
			if why != "" {
				return Visibility{Unsure: fmt.Sprintf("the local package %s (file:%s) %s", DisplayPath(pkg.name), DisplayPath(pkg.path), why)}
			}
			w.add(target, fmt.Sprintf("local package %s (file:%s)", DisplayPath(pkg.name), DisplayPath(pkg.path)))
			if why := w.drain(); why != "" {
				return Visibility{Unsure: why}
			}
		}
	}
	v := Visibility{}
	for p, via := range w.roots {
		if !inUnityRoot(p + "/") {
			v.Roots = append(v.Roots, Root{Path: p, Via: via})
		}
	}
	sort.Slice(v.Roots, func(i, j int) bool { return v.Roots[i].Path < v.Roots[j].Path })
	return v
}

// walker collects the visible roots: each link in the queue makes its
// target visible, and the links inside a visible target join the queue.
type walker struct {
	r       resolver
	links   map[string]string
	roots   map[string]string
	visited map[string]bool
	queue   []string
}

func (w *walker) add(p, via string) {
	if _, ok := w.roots[p]; !ok {
		w.roots[p] = via
	}
	var inside []string
	for l := range w.links {
		if !w.visited[l] && (l == p || strings.HasPrefix(l, p+"/")) {
			w.visited[l] = true
			inside = append(inside, l)
		}
	}
	sort.Strings(inside)
	w.queue = append(w.queue, inside...)
}

// drain resolves the queued links; it returns why one cannot be resolved.
func (w *walker) drain() string {
	for len(w.queue) > 0 {
		l := w.queue[0]
		w.queue = w.queue[1:]
		target, why := w.r.resolve(path.Dir(l), w.links[l])
		if why == "" && target == "" {
			why = "points at the repository itself"
		}
		if why != "" {
			return fmt.Sprintf("the symbolic link %s (→ %s) %s", DisplayPath(l), DisplayPath(w.links[l]), why)
		}
		w.add(target, fmt.Sprintf("symbolic link %s → %s", DisplayPath(l), DisplayPath(w.links[l])))
	}
	return ""
}

// resolver resolves paths through the tree's symbolic links.
type resolver struct{ links map[string]string }

// resolve returns the repository path target names from directory dir
// ("." for the root), following links; why is set when it cannot.
func (r resolver) resolve(dir, target string) (string, string) {
	hops := 0
	return r.walk(dir, target, &hops)
}

func (r resolver) walk(dir, target string, hops *int) (string, string) {
	switch {
	case target == "":
		return "", "has an empty target"
	case len(target) > MaxLinkTarget:
		return "", fmt.Sprintf("has a target longer than %d bytes", MaxLinkTarget)
	case strings.ContainsRune(target, 0):
		return "", "has a target holding NUL"
	}
	t := strings.ReplaceAll(target, `\`, "/")
	if strings.HasPrefix(t, "/") || (len(t) >= 2 && t[1] == ':') {
		return "", "has an absolute target, which no change of this repository can be proven not to reach"
	}
	var cur []string
	if dir != "." && dir != "" {
		cur = strings.Split(dir, "/")
	}
	for _, part := range strings.Split(t, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", "leaves the repository"
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cur = append(cur, part)
		joined := strings.Join(cur, "/")
		if next, ok := r.links[joined]; ok {
			*hops++
			if *hops > maxHops {
				return "", fmt.Sprintf("is a chain of more than %d links (a loop?)", maxHops)
			}
			res, why := r.walk(path.Dir(joined), next, hops)
			if why != "" {
				return "", why
			}
			cur = nil
			if res != "" {
				cur = strings.Split(res, "/")
			}
		}
	}
	return strings.Join(cur, "/"), ""
}

// localPackage is one "file:" dependency of the manifest.
type localPackage struct{ name, path string }

// localPackages returns the manifest's "file:" dependencies, sorted by name;
// why is set when the manifest is not the JSON object Unity reads.
func localPackages(manifest []byte) ([]localPackage, string) {
	if len(manifest) > MaxManifestBytes {
		return nil, fmt.Sprintf("is larger than %d bytes", MaxManifestBytes)
	}
	var doc struct {
		Dependencies map[string]json.RawMessage `json:"dependencies"`
	}
	if err := json.Unmarshal(manifest, &doc); err != nil {
		return nil, "is not the JSON object Unity reads (" + err.Error() + ")"
	}
	var out []localPackage
	for name, raw := range doc.Dependencies {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Sprintf("names dependency %s with a value that is not a string", DisplayPath(name))
		}
		if rest, ok := cutFilePrefix(v); ok {
			out = append(out, localPackage{name: name, path: rest})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, ""
}

// cutFilePrefix returns the path of a "file:" dependency (Unity's local
// folder and tarball references), case-insensitively.
func cutFilePrefix(v string) (string, bool) {
	const prefix = "file:"
	if len(v) < len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return "", false
	}
	return v[len(prefix):], true
}

// Reasons of a Decision that Unity reads paths the allowlist calls
// independent.
const (
	// ReasonUnityVisible: a changed path in an independent folder is read
	// by Unity through a symbolic link under a Unity root or a local
	// package of the manifest (or is a case variant of a Unity root).
	ReasonUnityVisible = "unity-visible-path"
	// ReasonVisibilityUnknown: what Unity reads outside its roots could not
	// be decided (Visibility.Unsure), so no change is proven independent.
	ReasonVisibilityUnknown = "unity-visibility-unknown"
)

// ClassifyVisible refines a decision of Classify with what Unity reads
// outside its roots: a skip stands only when visibility was decided and no
// changed path is visible to Unity. A decision that already requires
// Unity is returned unchanged.
func ClassifyVisible(dec Decision, paths []string, vis Visibility) Decision {
	if dec.UnityRequired {
		return dec
	}
	if vis.Unsure != "" {
		return Decision{UnityRequired: true, Reason: ReasonVisibilityUnknown, Unsure: vis.Unsure, Paths: dec.Paths}
	}
	for _, p := range paths {
		if r, ok := vis.Covers(p); ok {
			return Decision{UnityRequired: true, Reason: ReasonUnityVisible, ForcedBy: p, Via: r.Via, Paths: dec.Paths}
		}
	}
	return dec
}
