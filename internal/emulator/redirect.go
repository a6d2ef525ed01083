package emulator

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Renamed repositories. GitHub keeps answering a repository's old name:
// "If a repository is renamed ... API requests to the old URL are
// redirected" with 301 Moved Permanently for GET and 307 Temporary Redirect
// for other methods, to the repository's /repositories/{id} URL
// (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects,
// https://github.blog/changelog/2021-07-26-repository-redirects-for-the-rest-api,
// and the redirect body {"message":"Moved Permanently","url":...,
// "documentation_url":"https://docs.github.com/v3/#http-redirects"} recorded
// in @octokit/fixtures' "renamed-repository" scenario).

// RenameRepo renames a repository, as its owner would in the settings: the
// new name serves everything, and every request to the old name is
// redirected to /repositories/{id}/... (301 for GET and HEAD, 307 for other
// methods). Branch rules, workflow registrations, installation selections
// and token scopes follow the repository.
func (e *Emulator) RenameRepo(ownerLogin, oldName, newName string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, oldName)
	if err != nil {
		return err
	}
	oldKey, newKey := repoKey(ownerLogin, oldName), repoKey(ownerLogin, newName)
	if _, taken := e.repos[newKey]; taken && newKey != oldKey {
		return fmt.Errorf("emulator: repository %s/%s already exists", ownerLogin, newName)
	}
	delete(e.repos, oldKey)
	r.Name = newName
	e.repos[newKey] = r
	if e.renamed == nil {
		e.renamed = map[string]int64{}
	}
	e.renamed[oldKey] = r.ID
	delete(e.renamed, newKey)
	moveKeys := func(m map[string][]BranchRule) {
		for k, v := range m {
			if rest, ok := strings.CutPrefix(k, oldKey+"\x00"); ok {
				delete(m, k)
				m[newKey+"\x00"+rest] = v
			}
		}
	}
	moveKeys(e.settings.rules)
	for k, v := range e.settings.workflows {
		if rest, ok := strings.CutPrefix(k, oldKey+"\x00"); ok {
			delete(e.settings.workflows, k)
			e.settings.workflows[newKey+"\x00"+rest] = v
		}
	}
	oldLower, newLower := strings.ToLower(oldName), strings.ToLower(newName)
	for _, in := range e.insts {
		if in.Owner == r.owner {
			for i, n := range in.Repos {
				if n == oldLower {
					in.Repos[i] = newLower
				}
			}
		}
	}
	for _, cr := range e.tokens {
		for i, n := range cr.repos {
			if n == oldKey {
				cr.repos[i] = newKey
			}
		}
	}
	clear(e.contentsJSON)
	return nil
}

// repoByIDLocked finds a repository by its numeric id.
func (e *Emulator) repoByIDLocked(id int64) *repo {
	for _, r := range e.repos {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// resolveRepositoriesPath rewrites /repositories/{id}/rest (the form redirects
// and Link headers use) to /repos/{owner}/{name}/rest, for the path and its
// escaped form. ok is false when the path is not of that form or the id is
// unknown (the request then gets 404).
func (e *Emulator) resolveRepositoriesPath(p, escaped string) (string, string, bool) {
	const prefix = "/repositories/"
	if !strings.HasPrefix(p, prefix) || !strings.HasPrefix(escaped, prefix) {
		return p, escaped, false
	}
	idPart, rest, _ := strings.Cut(strings.TrimPrefix(p, prefix), "/")
	_, escRest, _ := strings.Cut(strings.TrimPrefix(escaped, prefix), "/")
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil {
		return p, escaped, false
	}
	e.mu.Lock()
	r := e.repoByIDLocked(id)
	e.mu.Unlock()
	if r == nil {
		return p, escaped, false
	}
	base := "/repos/" + r.owner.Login + "/" + r.Name
	if rest != "" {
		return base + "/" + rest, base + "/" + escRest, true
	}
	return base, base, true
}

// redirectLocked answers a request to a renamed repository's old name: 301
// (GET, HEAD) or 307 (others) to /repositories/{id}/<the rest of the path>,
// or nil when owner/name was never renamed. Only a credential that can see
// the repository learns where it went; others get 404 as for any private
// repository.
func (c *reqCtx) redirectLocked() *response {
	id, ok := c.e.renamed[repoKey(c.params["owner"], c.params["repo"])]
	if !ok {
		return nil
	}
	r := c.e.repoByIDLocked(id)
	if r == nil || c.cred == nil || !c.cred.canSee(r) {
		return nil
	}
	esc := c.r.URL.EscapedPath()
	esc = strings.TrimPrefix(esc, "/api/v3")
	parts := strings.SplitN(strings.TrimPrefix(esc, "/"), "/", 4) // repos, owner, repo, rest
	loc := c.api("/repositories/%d", r.ID)
	if len(parts) == 4 && parts[3] != "" {
		loc += "/" + parts[3]
	}
	if c.r.URL.RawQuery != "" {
		loc += "?" + c.r.URL.RawQuery
	}
	status, msg := http.StatusTemporaryRedirect, "Temporary Redirect"
	if c.r.Method == http.MethodGet || c.r.Method == http.MethodHead {
		status, msg = http.StatusMovedPermanently, "Moved Permanently"
	}
	resp := c.json(status, map[string]any{"message": msg, "url": loc, "documentation_url": "https://docs.github.com/v3/#http-redirects"})
	resp.header.Set("Location", loc)
	return resp
}

// repositoriesLinkPath turns a /repos/{owner}/{repo}/rest API path into the
// /repositories/{id}/rest form GitHub uses in Link headers.
func (c *reqCtx) repositoriesLinkPath(path string) string {
	rest, ok := strings.CutPrefix(path, "/repos/")
	if !ok {
		return path
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return path
	}
	r, ok := c.e.repos[repoKey(parts[0], parts[1])]
	if !ok {
		return path
	}
	out := "/repositories/" + strconv.FormatInt(r.ID, 10)
	if len(parts) == 3 {
		out += "/" + parts[2]
	}
	return out
}
