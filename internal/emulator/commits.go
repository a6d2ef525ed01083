package emulator

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The web-flow account GitHub names as the committer of commits it creates
// and signs on a user's or App's behalf (REST writes, web edits).
const (
	webFlowLogin = "web-flow"
	webFlowID    = 19864447
)

// SeedAuthorLogin is the account the emulator names as the author of seed
// writes (PutFile, DeleteFile): an administrator pushing with git. It is a
// "User", never a bot, so a verifier that trusts only the writer App sees
// seed commits as written by someone else.
const SeedAuthorLogin = "emulator-seed"

// commitIdentity is who a commit names: the GitHub account linked to it
// (nil for none) and the git name/email.
type commitIdentity struct {
	login       string
	id          int64
	typ         string // "Bot" or "User"
	name, email string
}

func (ci commitIdentity) account(c *reqCtx) any {
	if ci.login == "" {
		return nil
	}
	return c.userJSON(ci.login, ci.id, ci.typ)
}

// writerIdentityLocked maps a commit's writer label (the credential that made
// the write) to the identities GitHub records. A Contents API write with an
// App installation token is authored by the App's bot account
// "<slug>[bot]" with the noreply address "<id>+<slug>[bot]@users.noreply.github.com",
// and GitHub signs it and names itself (web-flow) the committer when no
// custom author or committer is sent
// (https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots;
// observed in https://github.com/peter-evans/create-pull-request/issues/1241).
// A plain token's writes are authored by the token's account (GITHUB_TOKEN:
// github-actions[bot]). Seed writes are an unsigned git push by
// SeedAuthorLogin, who is also the committer.
func (e *Emulator) writerIdentityLocked(label string) (author, committer commitIdentity, verified bool) {
	webFlow := commitIdentity{login: webFlowLogin, id: webFlowID, typ: "User", name: "GitHub", email: "noreply@github.com"}
	bot := func(login string, id int64) commitIdentity {
		typ := "User"
		if strings.HasSuffix(login, "[bot]") {
			typ = "Bot"
		}
		return commitIdentity{login: login, id: id, typ: typ, name: login, email: strconv.FormatInt(id, 10) + "+" + login + "@users.noreply.github.com"}
	}
	switch {
	case strings.HasPrefix(label, "installation:"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(label, "installation:"), 10, 64)
		if in, ok := e.insts[id]; ok {
			if a, ok := e.apps[in.AppID]; ok {
				return bot(a.Slug+"[bot]", 100000000+a.ID), webFlow, true
			}
		}
	case strings.HasPrefix(label, "token:"):
		for _, cr := range e.tokens {
			if cr.label == label {
				return bot(cr.botLogin, cr.botID), webFlow, true
			}
		}
	}
	if login, ok := strings.CutPrefix(label, "push:"); ok {
		// An unsigned push linked to login by its email (PushFileAs).
		id := int64(2)
		for _, a := range e.apps {
			if a.Slug+"[bot]" == login {
				id = 100000000 + a.ID
			}
		}
		who := bot(login, id)
		return who, who, false
	}
	seed := commitIdentity{login: SeedAuthorLogin, id: 1, typ: "User", name: "Emulator Seed", email: "seed@emulator.invalid"}
	return seed, seed, false
}

// listCommitJSON is one element of the commits list: the REST "commit"
// object (https://docs.github.com/en/rest/commits/commits#list-commits).
func (c *reqCtx) listCommitJSON(r *repo, cm *commit) map[string]any {
	author, committer, verified := c.e.writerIdentityLocked(cm.Writer)
	date := cm.Time.UTC().Format(time.RFC3339)
	person := func(ci commitIdentity) map[string]any {
		return map[string]any{"name": ci.name, "email": ci.email, "date": date}
	}
	parents := []any{}
	if cm.Parent != "" {
		parents = append(parents, map[string]any{
			"sha": cm.Parent, "url": c.api("/repos/%s/commits/%s", r.fullName(), cm.Parent),
			"html_url": c.web("/%s/commit/%s", r.fullName(), cm.Parent),
		})
	}
	verification := map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}
	if verified {
		verification = map[string]any{"verified": true, "reason": "valid", "signature": nil, "payload": nil, "verified_at": date}
	}
	return map[string]any{
		"sha": cm.SHA, "node_id": nodeID("Commit", cm.SHA),
		"commit": map[string]any{
			"author": person(author), "committer": person(committer), "message": cm.Message,
			"tree":          map[string]any{"sha": cm.Tree, "url": c.api("/repos/%s/git/trees/%s", r.fullName(), cm.Tree)},
			"url":           c.api("/repos/%s/git/commits/%s", r.fullName(), cm.SHA),
			"comment_count": 0, "verification": verification,
		},
		"url":          c.api("/repos/%s/commits/%s", r.fullName(), cm.SHA),
		"html_url":     c.web("/%s/commit/%s", r.fullName(), cm.SHA),
		"comments_url": c.api("/repos/%s/commits/%s/comments", r.fullName(), cm.SHA),
		"author":       author.account(c), "committer": committer.account(c),
		"parents": parents,
	}
}

// GET /repos/{owner}/{repo}/commits?sha=&path=&since=&until=&per_page=&page=
// (https://docs.github.com/en/rest/commits/commits#list-commits): the commits
// reachable from sha (a branch or commit SHA; default the default branch),
// newest first. With path, only the commits that created, changed or deleted
// that file are listed (git log -- path on the emulator's linear first-parent
// history). since and until (ISO 8601) keep commits whose committer date is
// at or after since and at or before until. Pages follow the shared
// paginate helper (per_page default 30, at most 100; Link rel=next/last/
// prev/first). An unknown sha is 404 "No commit found for SHA: <sha>", the
// message GitHub gives (https://github.com/squalrus/merge-bot/issues/54);
// an unparsable since or until is 422 like GitHub's other timestamp
// parameters. Needs contents: read; ETags and 304s come from the shared
// response pipeline.
func hListCommits(c *reqCtx) *response {
	r, resp := c.repo("contents", "read")
	if resp != nil {
		return resp
	}
	ref := c.query.Get("sha")
	var head string
	if ref == "" {
		head = r.branches[r.DefaultBranch]
	} else if cm, _, ok := resolveRef(r, ref); ok {
		head = cm.SHA
	} else {
		return c.errorf(http.StatusNotFound, "No commit found for SHA: %s", ref)
	}
	bound := func(name string) (time.Time, *response) {
		v := c.query.Get(name)
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, c.validation("Invalid value for parameter '" + name + "': " + v)
		}
		return t, nil
	}
	since, resp := bound("since")
	if resp != nil {
		return resp
	}
	until, resp := bound("until")
	if resp != nil {
		return resp
	}
	p := strings.Trim(c.query.Get("path"), "/")
	var chain []*commit
	for sha := head; sha != ""; {
		cm := r.commits[sha]
		keep := true
		if p != "" {
			prev := ""
			if cm.Parent != "" {
				prev = r.commits[cm.Parent].Files[p]
			}
			keep = cm.Files[p] != prev
		}
		// Git stores commit times in whole seconds; compare at that grain.
		at := cm.Time.UTC().Truncate(time.Second)
		if keep && (!since.IsZero() && at.Before(since) || !until.IsZero() && at.After(until)) {
			keep = false
		}
		if keep {
			chain = append(chain, cm)
		}
		sha = cm.Parent
	}
	lo, hi, link := c.paginate(len(chain))
	out := make([]any, 0, hi-lo)
	for _, cm := range chain[lo:hi] {
		out = append(out, c.listCommitJSON(r, cm))
	}
	return c.paged(http.StatusOK, out, link)
}
