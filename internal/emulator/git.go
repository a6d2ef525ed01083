package emulator

import (
	"crypto/sha1" //nolint:gosec // git object ids are SHA-1 by definition
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// BlobSHA returns the git blob object id of content: SHA-1 over
// "blob <len>\x00" followed by the bytes, exactly as `git hash-object` does
// (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects). The Contents
// API reports this value as a file's "sha".
func BlobSHA(content []byte) string {
	h := sha1.New() //nolint:gosec // git object ids are SHA-1 by definition
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// commit is one immutable commit: a full snapshot (path → blob sha).
type commit struct {
	SHA     string
	Parent  string
	Tree    string
	Files   map[string]string
	Message string
	Time    time.Time
	Writer  string
}

// treeSHA is the snapshot's root git tree id (real git tree objects,
// nested directories included; gittrees.go).
func treeSHA(files map[string]string) string { return gitTreeRoot(files) }

// newCommitLocked creates and stores a commit object in the git commit
// format (tree, parent, author, committer, message) and returns it.
func (e *Emulator) newCommitLocked(r *repo, parent string, files map[string]string, msg, writer string) *commit {
	now := e.now()
	tree := treeSHA(files)
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	who := "GitHub Emulator <noreply@github.com>"
	fmt.Fprintf(&b, "author %s %d +0000\ncommitter %s %d +0000\n\n%s", who, now.Unix(), who, now.Unix(), msg)
	if !strings.HasSuffix(msg, "\n") {
		b.WriteString("\n")
	}
	h := sha1.New() //nolint:gosec // git object ids are SHA-1 by definition
	fmt.Fprintf(h, "commit %d\x00%s", b.Len(), b.String())
	c := &commit{SHA: hex.EncodeToString(h.Sum(nil)), Parent: parent, Tree: tree, Files: files, Message: msg, Time: now, Writer: writer}
	r.commits[c.SHA] = c
	return c
}

// writeFileLocked commits content (nil = delete) at path on branch and
// returns the commit and the new blob sha. The branch must exist.
func (e *Emulator) writeFileLocked(r *repo, branch, path string, content []byte, msg, writer string) (*commit, string) {
	head := r.commits[r.branches[branch]]
	files := make(map[string]string, len(head.Files)+1)
	for k, v := range head.Files {
		files[k] = v
	}
	sha := ""
	if content == nil {
		delete(files, path)
	} else {
		sha = BlobSHA(content)
		r.blobs[sha] = append([]byte{}, content...)
		files[path] = sha
	}
	c := e.newCommitLocked(r, head.SHA, files, msg, writer)
	r.branches[branch] = c.SHA
	return c, sha
}

// Version is one committed version of a file.
type Version struct {
	CommitSHA string    `json:"commit_sha"`
	BlobSHA   string    `json:"blob_sha"` // "" when the commit deleted the file
	Content   []byte    `json:"content"`  // nil when the commit deleted the file
	Time      time.Time `json:"time"`     // commit time (emulator clock)
	Message   string    `json:"message"`  // commit message
	Token     string    `json:"token"`    // writer label, e.g. "installation:42"; never a secret
}

// History returns every committed version of path reachable from branch's
// head along first parents, oldest first: one entry per commit that created,
// changed or deleted the file. Unknown repositories or branches give nil.
func (e *Emulator) History(ownerLogin, repoName, branch, path string) []Version {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return nil
	}
	head, ok := r.branches[branch]
	if !ok {
		return nil
	}
	return historyLocked(r, head, strings.Trim(path, "/"))
}

func historyLocked(r *repo, head, path string) []Version {
	var chain []*commit
	for sha := head; sha != ""; {
		c := r.commits[sha]
		chain = append(chain, c)
		sha = c.Parent
	}
	var out []Version
	prev := ""
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		cur := c.Files[path]
		if cur == prev {
			continue
		}
		v := Version{CommitSHA: c.SHA, BlobSHA: cur, Time: c.Time, Message: c.Message, Token: c.Writer}
		if cur != "" {
			v.Content = append([]byte{}, r.blobs[cur]...)
		}
		out = append(out, v)
		prev = cur
	}
	return out
}

// PutFile writes content at path on branch as a new commit authored by
// "seed", bypassing auth, rate limits and faults, and returns the blob sha.
func (e *Emulator) PutFile(ownerLogin, repoName, branch, path string, content []byte) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return "", err
	}
	if branch == "" {
		branch = r.DefaultBranch
	}
	if _, ok := r.branches[branch]; !ok {
		return "", fmt.Errorf("emulator: branch %q not found in %s", branch, r.fullName())
	}
	if content == nil {
		content = []byte{}
	}
	path = strings.Trim(path, "/")
	_, sha := e.writeFileLocked(r, branch, path, content, "Seed "+path, "seed")
	return sha, nil
}

// PushFileAs writes content at path on branch as an unsigned git push whose
// author and committer email is login's (an App bot's noreply address
// included), which GitHub links to that account: the commit lists login as
// its author, with verification "unsigned". It stands for anyone with push
// access borrowing a writer App's address; like PutFile it bypasses auth,
// rate limits and faults, and returns the blob sha.
func (e *Emulator) PushFileAs(ownerLogin, repoName, branch, path string, content []byte, login string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return "", err
	}
	if _, ok := r.branches[branch]; !ok {
		return "", fmt.Errorf("emulator: branch %q not found in %s", branch, r.fullName())
	}
	_, sha := e.writeFileLocked(r, branch, strings.Trim(path, "/"), content, "Update "+path, "push:"+login)
	return sha, nil
}

// DeleteFile removes path from branch as a new commit (seed write).
func (e *Emulator) DeleteFile(ownerLogin, repoName, branch, path string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return err
	}
	if branch == "" {
		branch = r.DefaultBranch
	}
	head, ok := r.branches[branch]
	if !ok {
		return fmt.Errorf("emulator: branch %q not found in %s", branch, r.fullName())
	}
	path = strings.Trim(path, "/")
	if _, ok := r.commits[head].Files[path]; !ok {
		return fmt.Errorf("emulator: %s not found on %s", path, branch)
	}
	e.writeFileLocked(r, branch, path, nil, "Delete "+path, "seed")
	return nil
}

// CreateBranch points a new branch at the head of from (seed operation).
func (e *Emulator) CreateBranch(ownerLogin, repoName, branch, from string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return err
	}
	if from == "" {
		from = r.DefaultBranch
	}
	head, ok := r.branches[from]
	if !ok {
		return fmt.Errorf("emulator: branch %q not found", from)
	}
	if _, ok := r.branches[branch]; ok {
		return fmt.Errorf("emulator: branch %q already exists", branch)
	}
	r.branches[branch] = head
	return nil
}

// BranchHead returns the commit sha a branch points at.
func (e *Emulator) BranchHead(ownerLogin, repoName, branch string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return "", false
	}
	sha, ok := r.branches[branch]
	return sha, ok
}

// resolveRef maps a ref query (branch, "heads/x", "refs/heads/x" or a commit
// sha) to a commit.
func resolveRef(r *repo, ref string) (*commit, string, bool) {
	if ref == "" {
		ref = r.DefaultBranch
	}
	b := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/"), "heads/")
	if sha, ok := r.branches[b]; ok {
		return r.commits[sha], b, true
	}
	if c, ok := r.commits[ref]; ok {
		return c, ref, true
	}
	return nil, "", false
}

// --- REST handlers: refs, branches, commits ---

func (c *reqCtx) refJSON(r *repo, branch, sha string) map[string]any {
	return map[string]any{
		"ref":     "refs/heads/" + branch,
		"node_id": nodeID("Ref", r.fullName()+":"+branch),
		"url":     c.api("/repos/%s/git/refs/heads/%s", r.fullName(), branch),
		"object": map[string]any{
			"sha":  sha,
			"type": "commit",
			"url":  c.api("/repos/%s/git/commits/%s", r.fullName(), sha),
		},
	}
}

// GET /repos/{owner}/{repo}/git/ref/{ref...}
// https://docs.github.com/en/rest/git/refs#get-a-reference
func hGetRef(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	ref := c.params["ref"]
	if !strings.HasPrefix(ref, "heads/") {
		return c.notFound()
	}
	b := strings.TrimPrefix(ref, "heads/")
	sha, ok := r.branches[b]
	if !ok {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.refJSON(r, b, sha))
}

// POST /repos/{owner}/{repo}/git/refs {ref, sha}
// https://docs.github.com/en/rest/git/refs#create-a-reference ; 422
// "Reference already exists" (notes B.2).
func hCreateRef(c *reqCtx) *response {
	r, resp := c.repo("contents", "write")
	if resp != nil {
		return resp
	}
	var body struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if body.Ref == "" || body.SHA == "" {
		return c.validation("Invalid request.\n\n\"ref\" and \"sha\" are required.")
	}
	if !strings.HasPrefix(body.Ref, "refs/") || strings.Count(body.Ref, "/") < 2 {
		return c.validation("Reference name is invalid")
	}
	if !strings.HasPrefix(body.Ref, "refs/heads/") {
		return c.validation("Only branch references are supported by the emulator")
	}
	b := strings.TrimPrefix(body.Ref, "refs/heads/")
	if _, ok := r.branches[b]; ok {
		return c.validation("Reference already exists")
	}
	if resp := c.ruleRefusalLocked(r, b, writeCreate); resp != nil {
		return resp
	}
	if _, ok := r.commits[body.SHA]; !ok {
		return c.validation("Object does not exist")
	}
	r.branches[b] = body.SHA
	resp = c.json(http.StatusCreated, c.refJSON(r, b, body.SHA))
	resp.header.Set("Location", c.api("/repos/%s/git/refs/heads/%s", r.fullName(), b))
	return resp
}

// PATCH /repos/{owner}/{repo}/git/refs/{ref...} {sha, force}
// https://docs.github.com/en/rest/git/refs#update-a-reference ; non fast
// forward → 422 "Update is not a fast forward" (notes B.2).
func hUpdateRef(c *reqCtx) *response {
	r, resp := c.repo("contents", "write")
	if resp != nil {
		return resp
	}
	b := strings.TrimPrefix(c.params["ref"], "heads/")
	old, ok := r.branches[b]
	if !ok {
		return c.validation("Reference does not exist")
	}
	var body struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if _, ok := r.commits[body.SHA]; !ok {
		return c.validation("Object does not exist")
	}
	if !body.Force && !isAncestor(r, old, body.SHA) {
		return c.validation("Update is not a fast forward")
	}
	kind := writeUpdate
	if !isAncestor(r, old, body.SHA) {
		kind = writeForce
	}
	if resp := c.ruleRefusalLocked(r, b, kind); resp != nil {
		return resp
	}
	r.branches[b] = body.SHA
	return c.json(http.StatusOK, c.refJSON(r, b, body.SHA))
}

// DELETE /repos/{owner}/{repo}/git/refs/{ref...} → 204, 422 when missing.
func hDeleteRef(c *reqCtx) *response {
	r, resp := c.repo("contents", "write")
	if resp != nil {
		return resp
	}
	b := strings.TrimPrefix(c.params["ref"], "heads/")
	if _, ok := r.branches[b]; !ok {
		return c.validation("Reference does not exist")
	}
	if resp := c.ruleRefusalLocked(r, b, writeDelete); resp != nil {
		return resp
	}
	delete(r.branches, b)
	return &response{status: http.StatusNoContent, header: http.Header{}}
}

func isAncestor(r *repo, anc, desc string) bool {
	for sha := desc; sha != ""; sha = r.commits[sha].Parent {
		if sha == anc {
			return true
		}
	}
	return false
}

func (c *reqCtx) commitJSON(r *repo, cm *commit) map[string]any {
	date := cm.Time.Format(time.RFC3339)
	parents := []any{}
	if cm.Parent != "" {
		parents = append(parents, map[string]any{
			"sha": cm.Parent, "url": c.api("/repos/%s/git/commits/%s", r.fullName(), cm.Parent),
			"html_url": c.web("/%s/commit/%s", r.fullName(), cm.Parent),
		})
	}
	person := map[string]any{"name": "GitHub Emulator", "email": "noreply@github.com", "date": date}
	return map[string]any{
		"sha": cm.SHA, "node_id": nodeID("Commit", cm.SHA),
		"url":      c.api("/repos/%s/git/commits/%s", r.fullName(), cm.SHA),
		"html_url": c.web("/%s/commit/%s", r.fullName(), cm.SHA),
		"author":   person, "committer": person,
		"tree":         map[string]any{"sha": cm.Tree, "url": c.api("/repos/%s/git/trees/%s", r.fullName(), cm.Tree)},
		"message":      cm.Message,
		"parents":      parents,
		"verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	}
}

// GET /repos/{owner}/{repo}/git/commits/{sha}
func hGetCommit(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	cm, ok := r.commits[c.params["sha"]]
	if !ok {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.commitJSON(r, cm))
}

// GET /repos/{owner}/{repo}/branches/{branch...}
// https://docs.github.com/en/rest/branches/branches#get-a-branch
func hGetBranch(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	b := c.params["branch"]
	sha, ok := r.branches[b]
	if !ok {
		return c.errorf(http.StatusNotFound, "Branch not found")
	}
	cm := r.commits[sha]
	// The branch's commit is the commits API's full commit object
	// (https://docs.github.com/en/rest/branches/branches#get-a-branch).
	protected := len(c.e.settings.rules[repoKey(r.owner.Login, r.Name)+"\x00"+b]) > 0
	return c.json(http.StatusOK, map[string]any{
		"name":           b,
		"commit":         c.listCommitJSON(r, cm),
		"protected":      protected,
		"protection":     map[string]any{"enabled": protected, "required_status_checks": map[string]any{"enforcement_level": "off", "contexts": []any{}, "checks": []any{}}},
		"protection_url": c.api("/repos/%s/branches/%s/protection", r.fullName(), b),
		"_links":         map[string]any{"self": c.api("/repos/%s/branches/%s", r.fullName(), b), "html": c.web("/%s/tree/%s", r.fullName(), b)},
	})
}
