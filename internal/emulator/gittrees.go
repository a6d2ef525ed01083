package emulator

import (
	"crypto/sha1" //nolint:gosec // git object ids are SHA-1 by definition
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strings"
)

// Git trees and blobs: the read side of the Git database API
// (https://docs.github.com/en/rest/git/trees#get-a-tree,
// https://docs.github.com/en/rest/git/blobs#get-a-blob), which the
// enrollment audit uses to read a repository at one exact commit.

// DefaultTreeEntryLimit is GitHub's limit on a recursive tree listing:
// "The limit for the tree array is 100,000 entries with a maximum size of
// 7 MB when using the recursive parameter"; beyond it the response is
// truncated and says so ("truncated": true).
const DefaultTreeEntryLimit = 100000

// gitTreeEntry is one entry of a git tree object.
type gitTreeEntry struct {
	name string
	mode string // "100644" blob, "40000" tree
	sha  string
	tree bool
}

// gitTreeObj is one tree object.
type gitTreeObj struct {
	sha     string
	entries []gitTreeEntry
}

// buildTrees computes the real git tree objects of a flat snapshot
// (path → blob sha): each directory's entries are "<mode> <name>\x00<20-byte
// id>", sorted by name with trees compared as "name/", hashed as
// "tree <len>\x00<entries>" (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects).
// An empty snapshot is git's empty tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904.
func buildTrees(files map[string]string) (string, map[string]*gitTreeObj) {
	type dir struct {
		files map[string]string
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]string{}, dirs: map[string]*dir{}} }
	root := newDir()
	for p, sha := range files {
		segs := strings.Split(p, "/")
		d := root
		for _, s := range segs[:len(segs)-1] {
			sub, ok := d.dirs[s]
			if !ok {
				sub = newDir()
				d.dirs[s] = sub
			}
			d = sub
		}
		d.files[segs[len(segs)-1]] = sha
	}
	objs := map[string]*gitTreeObj{}
	var hash func(d *dir) string
	hash = func(d *dir) string {
		var es []gitTreeEntry
		for n, sha := range d.files {
			es = append(es, gitTreeEntry{name: n, mode: "100644", sha: sha})
		}
		for n, sub := range d.dirs {
			es = append(es, gitTreeEntry{name: n, mode: "40000", sha: hash(sub), tree: true})
		}
		key := func(e gitTreeEntry) string {
			if e.tree {
				return e.name + "/"
			}
			return e.name
		}
		sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
		var b strings.Builder
		for _, e := range es {
			raw, _ := hex.DecodeString(e.sha)
			fmt.Fprintf(&b, "%s %s\x00%s", e.mode, e.name, raw)
		}
		h := sha1.New() //nolint:gosec // git object ids are SHA-1 by definition
		fmt.Fprintf(h, "tree %d\x00%s", b.Len(), b.String())
		sha := hex.EncodeToString(h.Sum(nil))
		objs[sha] = &gitTreeObj{sha: sha, entries: es}
		return sha
	}
	return hash(root), objs
}

// gitTreeRoot is the root tree id of a snapshot (the commit's "tree").
func gitTreeRoot(files map[string]string) string {
	root, _ := buildTrees(files)
	return root
}

// findTree resolves a tree_sha parameter: a tree id of any commit (branch
// heads first, then every commit in id order), or, as GitHub also accepts,
// a branch name or commit id standing for that commit's root tree.
func findTree(r *repo, want string) (*gitTreeObj, map[string]*gitTreeObj, bool) {
	var order []string
	seen := map[string]bool{}
	for _, b := range sortedKeys(r.branches) {
		if sha := r.branches[b]; !seen[sha] {
			seen[sha] = true
			order = append(order, sha)
		}
	}
	for _, sha := range sortedKeys(r.commits) {
		if !seen[sha] {
			order = append(order, sha)
		}
	}
	for _, sha := range order {
		if _, objs := buildTrees(r.commits[sha].Files); objs[want] != nil {
			return objs[want], objs, true
		}
	}
	if cm, _, ok := resolveRef(r, want); ok {
		root, objs := buildTrees(cm.Files)
		return objs[root], objs, true
	}
	return nil, nil, false
}

// GET /repos/{owner}/{repo}/git/trees/{tree_sha}?recursive=
// https://docs.github.com/en/rest/git/trees#get-a-tree — any recursive
// value (even 0 or false) lists every descendant, subtrees included, in
// depth-first git order; past Options.TreeEntryLimit entries the list is
// cut and "truncated" is true. Blob entries carry their size.
func hGetTree(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	t, objs, ok := findTree(r, c.params["tree_sha"])
	if !ok {
		return c.notFound()
	}
	limit := c.e.opts.TreeEntryLimit
	if limit <= 0 {
		limit = DefaultTreeEntryLimit
	}
	_, recursive := c.query["recursive"]
	var out []any
	truncated := false
	var walk func(t *gitTreeObj, prefix string) bool
	walk = func(t *gitTreeObj, prefix string) bool {
		for _, e := range t.entries {
			if len(out) >= limit {
				truncated = true
				return false
			}
			p := path.Join(prefix, e.name)
			entry := map[string]any{"path": p, "mode": e.mode, "sha": e.sha}
			if e.tree {
				entry["type"], entry["url"] = "tree", c.api("/repos/%s/git/trees/%s", r.fullName(), e.sha)
			} else {
				entry["type"], entry["size"], entry["url"] = "blob", len(r.blobs[e.sha]), c.api("/repos/%s/git/blobs/%s", r.fullName(), e.sha)
			}
			out = append(out, entry)
			if e.tree && recursive && !walk(objs[e.sha], p) {
				return false
			}
		}
		return true
	}
	walk(t, "")
	if out == nil {
		out = []any{}
	}
	return c.json(http.StatusOK, map[string]any{
		"sha": t.sha, "url": c.api("/repos/%s/git/trees/%s", r.fullName(), t.sha), "tree": out, "truncated": truncated,
	})
}

// GET /repos/{owner}/{repo}/git/blobs/{file_sha}
// https://docs.github.com/en/rest/git/blobs#get-a-blob — content is always
// Base64 (encoded like the Contents API, a newline every 60 characters);
// Accept: application/vnd.github.raw returns the bytes.
func hGetBlob(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	sha := c.params["file_sha"]
	content, ok := r.blobs[sha]
	if !ok {
		return c.notFound()
	}
	if isRawAccept(c.r.Header.Get("Accept")) {
		h := http.Header{}
		h.Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
		return &response{status: http.StatusOK, header: h, body: append([]byte{}, content...)}
	}
	return c.json(http.StatusOK, map[string]any{
		"sha": sha, "node_id": nodeID("Blob", r.fullName()+":"+sha), "size": len(content),
		"url": c.api("/repos/%s/git/blobs/%s", r.fullName(), sha), "content": encode64(content), "encoding": "base64",
	})
}

// SetRepoFork sets the fork flag GET /repos/{owner}/{repo} reports.
func (e *Emulator) SetRepoFork(ownerLogin, repoName string, fork bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return err
	}
	r.Fork = fork
	return nil
}
