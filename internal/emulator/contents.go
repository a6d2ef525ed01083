package emulator

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
)

// encode64 reproduces Ruby's Base64.encode64, which GitHub uses for the
// Contents API: a "\n" after every 60 characters and at the end (notes §5:
// "GitHub inserts \n every 60 base64 characters").
func encode64(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(s) > 60 {
		sb.WriteString(s[:60])
		sb.WriteByte('\n')
		s = s[60:]
	}
	if s != "" {
		sb.WriteString(s)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// maxInlineContent is the size above which the Contents API returns an empty
// "content" with encoding "none" (files between 1 and 100 MB):
// https://docs.github.com/en/rest/repos/contents#get-repository-content
const maxInlineContent = 1 << 20

// DefaultFileSizeLimit is the largest file the Contents API serves or
// accepts: "both endpoints have a file size limit of 100 MB. However,
// requests for file contents larger than 1 MB must include the .raw custom
// media type" (https://github.blog/changelog/2022-05-03-increased-file-size-limit-when-retrieving-file-contents-via-rest-api).
const DefaultFileSizeLimit = 100 << 20

// fileSizeLimit is Options.FileSizeLimit or the default.
func (e *Emulator) fileSizeLimit() int {
	if e.opts.FileSizeLimit > 0 {
		return e.opts.FileSizeLimit
	}
	return DefaultFileSizeLimit
}

// tooLarge is GitHub's answer for a blob over the size limit (403, code
// too_large, as the Contents API sends for files over 100 MB).
func tooLarge() *response {
	b := []byte(`{"message":"This API returns blobs up to 100 MB in size. The requested blob is too large to fetch via the API, but you can always clone the repository via Git to obtain it.","errors":[{"resource":"Blob","field":"data","code":"too_large"}],"documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","status":"403"}`)
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: http.StatusForbidden, header: h, body: b}
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func (c *reqCtx) fileJSON(r *repo, p, sha string, size int, ref string) map[string]any {
	full := r.fullName()
	self := c.api("/repos/%s/contents/%s?ref=%s", full, escapePath(p), url.QueryEscape(ref))
	git := c.api("/repos/%s/git/blobs/%s", full, sha)
	html := c.web("/%s/blob/%s/%s", full, ref, escapePath(p))
	return map[string]any{
		"type": "file", "name": path.Base(p), "path": p, "sha": sha, "size": size,
		"url": self, "html_url": html, "git_url": git,
		"download_url": c.web("/%s/raw/%s/%s", full, ref, escapePath(p)),
		"_links":       map[string]any{"self": self, "git": git, "html": html},
	}
}

func isRawAccept(accept string) bool {
	for _, a := range strings.Split(accept, ",") {
		a = strings.TrimSpace(strings.SplitN(a, ";", 2)[0])
		if a == "application/vnd.github.raw" || a == "application/vnd.github.raw+json" || a == "application/vnd.github.v3.raw" {
			return true
		}
	}
	return false
}

// GET /repos/{owner}/{repo}/contents/{path}?ref= (E9, E10):
// https://docs.github.com/en/rest/repos/contents#get-repository-content
// ref defaults to the default branch; a missing file is 404; a directory is
// listed; Accept: application/vnd.github.raw returns the bytes.
func hGetContents(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	ref := c.query.Get("ref")
	cm, refName, ok := resolveRef(r, ref)
	if !ok {
		return c.errorf(http.StatusNotFound, "No commit found for the ref %s", ref)
	}
	p := strings.Trim(c.params["path"], "/")
	lagged := false
	if c.stale == 0 {
		if head, isBranch := r.branches[refName]; isBranch && head == cm.SHA {
			cm, lagged = c.e.laggedCommitLocked(r, cm)
		}
	}
	sha, exists := cm.Files[p]
	lagged = lagged && sha != r.commits[r.branches[refName]].Files[p]
	if c.stale > 0 {
		if head, isBranch := r.branches[refName]; isBranch {
			if vs := historyLocked(r, head, p); len(vs) > 0 {
				v := vs[max(len(vs)-1-c.stale, 0)]
				sha, exists = v.BlobSHA, v.BlobSHA != ""
			}
		}
	}
	if !exists {
		resp := c.listDir(r, cm, p, refName)
		resp.lagged = lagged
		return resp
	}
	content := r.blobs[sha]
	if len(content) > c.e.fileSizeLimit() {
		return tooLarge()
	}
	if isRawAccept(c.r.Header.Get("Accept")) {
		h := http.Header{}
		h.Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
		return &response{status: http.StatusOK, header: h, body: append([]byte{}, content...), lagged: lagged}
	}
	// The body depends only on these; polls repeat it thousands of times per
	// simulated hour, so it is encoded once (the ETag is still computed per
	// token in finalizeLocked).
	key := strings.Join([]string{c.apiBase, c.webBase, r.fullName(), p, sha, refName}, "\x00")
	if b, ok := c.e.contentsJSON[key]; ok {
		resp := c.jsonBytes(http.StatusOK, bytes.Clone(b))
		resp.lagged = lagged
		return resp
	}
	obj := c.fileJSON(r, p, sha, len(content), refName)
	if len(content) > maxInlineContent {
		obj["content"], obj["encoding"] = "", "none"
	} else {
		obj["content"], obj["encoding"] = encode64(content), "base64"
	}
	resp = c.json(http.StatusOK, obj)
	if resp.status == http.StatusOK {
		if len(c.e.contentsJSON) >= maxContentsJSON {
			clear(c.e.contentsJSON)
		}
		c.e.contentsJSON[key] = bytes.Clone(resp.body)
	}
	resp.lagged = lagged
	return resp
}

// maxContentsJSON bounds the encoded-contents memo of one emulator.
const maxContentsJSON = 1024

func (c *reqCtx) listDir(r *repo, cm *commit, dir, ref string) *response {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	entries := map[string]map[string]any{}
	for fp, sha := range cm.Files {
		if !strings.HasPrefix(fp, prefix) {
			continue
		}
		rest := strings.TrimPrefix(fp, prefix)
		name, _, isDir := strings.Cut(rest, "/")
		if isDir {
			dp := prefix + name
			self := c.api("/repos/%s/contents/%s?ref=%s", r.fullName(), escapePath(dp), url.QueryEscape(ref))
			entries[name] = map[string]any{"type": "dir", "name": name, "path": dp, "sha": treeSHA(map[string]string{dp: ""}), "size": 0,
				"url": self, "html_url": c.web("/%s/tree/%s/%s", r.fullName(), ref, escapePath(dp)), "git_url": nil, "download_url": nil,
				"_links": map[string]any{"self": self}}
			continue
		}
		entries[name] = c.fileJSON(r, fp, sha, len(r.blobs[sha]), ref)
	}
	if len(entries) == 0 {
		return c.notFound()
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]any, 0, len(names))
	for _, n := range names {
		out = append(out, entries[n])
	}
	return c.json(http.StatusOK, out)
}

type contentsWrite struct {
	Message *string `json:"message"`
	Content *string `json:"content"`
	Branch  string  `json:"branch"`
	SHA     string  `json:"sha"`
}

// PUT /repos/{owner}/{repo}/contents/{path} (E11), with GitHub's measured
// compare-and-swap semantics (https://github.com/pome-sh/digital-twins/pull/400,
// docs: https://docs.github.com/en/rest/repos/contents#create-or-update-file-contents):
//
//   - nonexistent branch → 404 (checked before the sha);
//   - existing file, no sha → 422 `Invalid request.\n\n"sha" wasn't supplied.`;
//   - existing file, other sha → 409 "<path> does not match <sha>";
//   - absent file, any sha → 201: the sha is ignored. This is the real CAS
//     gap: a deleted state file is silently re-created;
//   - create → 201, update → 200, body {content:{…,sha}, commit:{…}}.
//
// The check and the commit happen under the emulator lock, so the CAS is
// atomic per branch.
func hPutContents(c *reqCtx) *response {
	r, resp := c.repo("contents", "write")
	if resp != nil {
		return resp
	}
	var body contentsWrite
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if body.Message == nil {
		return c.validation("Invalid request.\n\n\"message\" wasn't supplied.")
	}
	if body.Content == nil {
		return c.validation("Invalid request.\n\n\"content\" wasn't supplied.")
	}
	content, err := base64.StdEncoding.DecodeString(stripSpace(*body.Content))
	if err == nil && len(content) > c.e.fileSizeLimit() {
		return c.validation(fmt.Sprintf("Invalid request.\n\nThe file is %d bytes; files over %d bytes cannot be written through the Contents API.", len(content), c.e.fileSizeLimit()))
	}
	if err != nil {
		return c.validation("content is not valid Base64")
	}
	branch := body.Branch
	if branch == "" {
		branch = r.DefaultBranch
	}
	head, ok := r.branches[branch]
	if !ok {
		return c.errorf(http.StatusNotFound, "Branch %s not found", branch)
	}
	p := strings.Trim(c.params["path"], "/")
	if resp := c.ruleRefusalLocked(r, branch, writeUpdate, p); resp != nil {
		return resp
	}
	if resp := c.headMovedLocked(head); resp != nil {
		return resp
	}
	existing := r.commits[head].Files[p]
	if existing != "" {
		if body.SHA == "" {
			resp := errorResponse(http.StatusUnprocessableEntity, "Invalid request.\n\n\"sha\" wasn't supplied.", docsContentsPut)
			resp.conflict = true
			return resp
		}
		if body.SHA != existing {
			resp := errorResponse(http.StatusConflict, p+" does not match "+body.SHA, docsContentsPut)
			resp.conflict = true
			return resp
		}
	}
	cm, sha := c.e.writeFileLocked(r, branch, p, content, *body.Message, c.cred.label)
	status := http.StatusCreated
	if existing != "" {
		status = http.StatusOK
	}
	return c.json(status, map[string]any{"content": c.fileJSON(r, p, sha, len(content), branch), "commit": c.commitJSON(r, cm)})
}

// DELETE /repos/{owner}/{repo}/contents/{path}:
// https://docs.github.com/en/rest/repos/contents#delete-a-file — sha is
// required (422), must match (409); a missing file is 404.
func hDeleteContents(c *reqCtx) *response {
	r, resp := c.repo("contents", "write")
	if resp != nil {
		return resp
	}
	var body contentsWrite
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if body.Message == nil {
		return c.validation("Invalid request.\n\n\"message\" wasn't supplied.")
	}
	if body.SHA == "" {
		resp := c.validation("Invalid request.\n\n\"sha\" wasn't supplied.")
		resp.conflict = true
		return resp
	}
	branch := body.Branch
	if branch == "" {
		branch = r.DefaultBranch
	}
	head, ok := r.branches[branch]
	if !ok {
		return c.errorf(http.StatusNotFound, "Branch %s not found", branch)
	}
	p := strings.Trim(c.params["path"], "/")
	if resp := c.ruleRefusalLocked(r, branch, writeUpdate, p); resp != nil {
		return resp
	}
	if resp := c.headMovedLocked(head); resp != nil {
		return resp
	}
	existing := r.commits[head].Files[p]
	if existing == "" {
		return c.notFound()
	}
	if existing != body.SHA {
		resp := errorResponse(http.StatusConflict, p+" does not match "+body.SHA, docsContentsPut)
		resp.conflict = true
		return resp
	}
	cm, _ := c.e.writeFileLocked(r, branch, p, nil, *body.Message, c.cred.label)
	return c.json(http.StatusOK, map[string]any{"content": nil, "commit": c.commitJSON(r, cm)})
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
}

func (c *reqCtx) repoJSON(r *repo) map[string]any { return c.fullRepoJSON(r) }

// GET /repos/{owner}/{repo} (E6, E14) — metadata:read, 404 when invisible.
func hGetRepo(c *reqCtx) *response {
	r, resp := c.repo("metadata", "read")
	if resp != nil {
		return resp
	}
	return c.json(http.StatusOK, c.repoJSON(r))
}
