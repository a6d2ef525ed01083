package emulator

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ParsePublicKeyPEM parses an RSA public key in PEM ("PUBLIC KEY" PKIX or
// "RSA PUBLIC KEY" PKCS#1). A private key PEM is also accepted and only its
// public half is kept.
func ParsePublicKeyPEM(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("emulator: no PEM block found")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("emulator: not an RSA public key")
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("emulator: invalid RSA private key")
		}
		return &k.PublicKey, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("emulator: invalid private key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("emulator: not an RSA key")
		}
		return &rk.PublicKey, nil
	}
	return nil, fmt.Errorf("emulator: unsupported PEM block %q", block.Type)
}

func adminJSON(status int, v any) *response {
	b, _ := json.MarshalIndent(v, "", "  ")
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: status, header: h, body: append(b, '\n')}
}

func adminErr(status int, format string, a ...any) *response {
	return adminJSON(status, map[string]string{"message": fmt.Sprintf(format, a...)})
}

// adminFault is Fault with a human latency ("250ms") for the admin API.
type adminFault struct {
	Fault
	Latency json.RawMessage `json:"latency,omitempty"`
}

func (af adminFault) toFault() (Fault, error) {
	f := af.Fault
	if len(af.Latency) > 0 {
		var s string
		if err := json.Unmarshal(af.Latency, &s); err == nil {
			d, err := time.ParseDuration(s)
			if err != nil {
				return f, err
			}
			f.Latency = d
		} else {
			var n int64
			if err := json.Unmarshal(af.Latency, &n); err != nil {
				return f, errors.New("latency must be a duration string or nanoseconds")
			}
			f.Latency = time.Duration(n)
		}
	}
	return f, nil
}

// admin serves the unauthenticated seeding/inspection API under /_emulator.
// It is not counted in metrics and ignores faults. See docs/emulator.md.
func (e *Emulator) admin(r *http.Request, p string) *response {
	p = strings.TrimSuffix(p, "/")
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	dec := func(v any) error {
		if len(body) == 0 {
			return nil
		}
		return json.Unmarshal(body, v)
	}
	q := r.URL.Query()
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	key := r.Method + " /" + seg[0]
	var sub string
	if len(seg) > 1 {
		sub = seg[1]
		key += "/{id}"
	}
	idArg, _ := strconv.ParseInt(sub, 10, 64)
	bad := func(err error) *response { return adminErr(http.StatusBadRequest, "%v", err) }

	switch key {
	case "GET /", "GET /state":
		return adminJSON(http.StatusOK, e.State())
	case "POST /owners":
		var in struct {
			Login string `json:"login"`
			ID    int64  `json:"id"`
			Org   *bool  `json:"org"`
		}
		if err := dec(&in); err != nil || in.Login == "" {
			return adminErr(http.StatusBadRequest, "login is required")
		}
		org := in.Org == nil || *in.Org
		e.AddOwner(in.Login, in.ID, org)
		return adminJSON(http.StatusCreated, map[string]any{"login": in.Login})
	case "POST /repos":
		var in struct {
			Owner         string `json:"owner"`
			Name          string `json:"name"`
			ID            int64  `json:"id"`
			DefaultBranch string `json:"default_branch"`
		}
		if err := dec(&in); err != nil || in.Owner == "" || in.Name == "" {
			return adminErr(http.StatusBadRequest, "owner and name are required")
		}
		e.AddRepo(in.Owner, in.Name, in.ID, in.DefaultBranch)
		e.mu.Lock()
		rp := e.repos[repoKey(in.Owner, in.Name)]
		out := map[string]any{"id": rp.ID, "full_name": rp.fullName(), "default_branch": rp.DefaultBranch}
		e.mu.Unlock()
		return adminJSON(http.StatusCreated, out)
	case "POST /rules":
		// Install (or, with "rules": [], remove) the rules on a branch; the
		// branch's writes then answer as GitHub does (rules.go).
		var in struct {
			Owner  string       `json:"owner"`
			Repo   string       `json:"repo"`
			Branch string       `json:"branch"`
			Rules  []BranchRule `json:"rules"`
		}
		if err := dec(&in); err != nil || in.Owner == "" || in.Repo == "" || in.Branch == "" {
			return adminErr(http.StatusBadRequest, "owner, repo and branch are required")
		}
		if err := e.SetBranchRules(in.Owner, in.Repo, in.Branch, in.Rules); err != nil {
			return bad(err)
		}
		return adminJSON(http.StatusOK, map[string]any{"branch": in.Branch, "rules": len(in.Rules)})
	case "POST /renames":
		var in struct {
			Owner string `json:"owner"`
			Repo  string `json:"repo"`
			To    string `json:"to"`
		}
		if err := dec(&in); err != nil || in.Owner == "" || in.Repo == "" || in.To == "" {
			return adminErr(http.StatusBadRequest, "owner, repo and to are required")
		}
		if err := e.RenameRepo(in.Owner, in.Repo, in.To); err != nil {
			return bad(err)
		}
		return adminJSON(http.StatusOK, map[string]any{"full_name": in.Owner + "/" + in.To})
	case "POST /branches":
		var in struct{ Owner, Repo, Branch, From string }
		if err := dec(&in); err != nil {
			return bad(err)
		}
		if err := e.CreateBranch(in.Owner, in.Repo, in.Branch, in.From); err != nil {
			return bad(err)
		}
		sha, _ := e.BranchHead(in.Owner, in.Repo, in.Branch)
		return adminJSON(http.StatusCreated, map[string]any{"branch": in.Branch, "sha": sha})
	case "POST /files", "DELETE /files":
		var in struct {
			Owner, Repo, Branch, Path string
			Content                   *string `json:"content"`
			ContentBase64             *string `json:"content_base64"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		for _, k := range []string{"owner", "repo", "branch", "path"} {
			if v := q.Get(k); v != "" {
				switch k {
				case "owner":
					in.Owner = v
				case "repo":
					in.Repo = v
				case "branch":
					in.Branch = v
				case "path":
					in.Path = v
				}
			}
		}
		if r.Method == http.MethodDelete {
			if err := e.DeleteFile(in.Owner, in.Repo, in.Branch, in.Path); err != nil {
				return adminErr(http.StatusNotFound, "%v", err)
			}
			return adminJSON(http.StatusOK, map[string]any{"deleted": in.Path})
		}
		var content []byte
		switch {
		case in.ContentBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(stripSpace(*in.ContentBase64))
			if err != nil {
				return bad(err)
			}
			content = b
		case in.Content != nil:
			content = []byte(*in.Content)
		}
		sha, err := e.PutFile(in.Owner, in.Repo, in.Branch, in.Path, content)
		if err != nil {
			return bad(err)
		}
		return adminJSON(http.StatusCreated, map[string]any{"sha": sha, "path": in.Path})
	case "POST /apps":
		var in struct {
			AppID        int64  `json:"app_id"`
			PublicKeyPEM string `json:"public_key_pem"`
			Slug         string `json:"slug"`
		}
		if err := dec(&in); err != nil || in.AppID == 0 {
			return adminErr(http.StatusBadRequest, "app_id and public_key_pem are required")
		}
		k, err := ParsePublicKeyPEM([]byte(in.PublicKeyPEM))
		if err != nil {
			return bad(err)
		}
		e.AddApp(in.AppID, k)
		if in.Slug != "" {
			_ = e.SetAppSlug(in.AppID, in.Slug)
		}
		return adminJSON(http.StatusCreated, map[string]any{"app_id": in.AppID})
	case "POST /installations":
		var in struct {
			AppID       int64             `json:"app_id"`
			Owner       string            `json:"owner"`
			Repos       []string          `json:"repos"`
			Permissions map[string]string `json:"permissions"`
		}
		if err := dec(&in); err != nil || in.AppID == 0 || in.Owner == "" {
			return adminErr(http.StatusBadRequest, "app_id and owner are required")
		}
		id := e.InstallApp(in.AppID, in.Owner, in.Repos)
		if in.Permissions != nil {
			_ = e.SetInstallationPermissions(id, in.Permissions)
		}
		return adminJSON(http.StatusCreated, map[string]any{"installation_id": id})
	case "POST /tokens":
		var in struct {
			Token string `json:"token"`
			TokenScope
		}
		if err := dec(&in); err != nil || in.Token == "" {
			return adminErr(http.StatusBadRequest, "token is required")
		}
		e.AddToken(in.Token, in.TokenScope)
		return adminJSON(http.StatusCreated, map[string]any{"label": in.Label})
	case "POST /runs":
		var in struct {
			Owner, Repo string
			Run         Run `json:"run"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		id := e.CreateRun(in.Owner, in.Repo, in.Run)
		return adminJSON(http.StatusCreated, map[string]any{"id": id})
	case "POST /runs/{id}":
		var in struct {
			Owner, Repo, Status, Conclusion string
			NewAttempt                      bool `json:"new_attempt"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		if in.NewAttempt {
			if e.NewRunAttempt(in.Owner, in.Repo, idArg) == 0 {
				return adminErr(http.StatusNotFound, "run %d not found", idArg)
			}
		}
		if in.Status != "" {
			if err := e.SetRunStatus(in.Owner, in.Repo, idArg, in.Status, in.Conclusion); err != nil {
				return adminErr(http.StatusNotFound, "%v", err)
			}
		}
		return adminJSON(http.StatusOK, map[string]any{"id": idArg})
	case "POST /jobs":
		var in struct {
			Owner, Repo string
			RunID       int64 `json:"run_id"`
			Attempt     int   `json:"attempt"`
			Job         Job   `json:"job"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		id := e.AddJob(in.Owner, in.Repo, in.RunID, in.Attempt, in.Job)
		if id == 0 {
			return adminErr(http.StatusNotFound, "run %d not found", in.RunID)
		}
		return adminJSON(http.StatusCreated, map[string]any{"id": id})
	case "POST /jobs/{id}":
		var in struct{ Owner, Repo, Status, Conclusion string }
		if err := dec(&in); err != nil {
			return bad(err)
		}
		if err := e.SetJobStatus(in.Owner, in.Repo, idArg, in.Status, in.Conclusion); err != nil {
			return adminErr(http.StatusNotFound, "%v", err)
		}
		return adminJSON(http.StatusOK, map[string]any{"id": idArg})
	case "POST /pulls":
		var in struct {
			Owner, Repo string
			PullRequest
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		n := e.AddPullRequest(in.Owner, in.Repo, in.PullRequest)
		return adminJSON(http.StatusCreated, map[string]any{"number": n})
	case "POST /issues":
		var in struct{ Owner, Repo, Author, Title, Body, State string }
		if err := dec(&in); err != nil {
			return bad(err)
		}
		n, err := e.CreateIssue(in.Owner, in.Repo, in.Author, in.Title, in.Body, in.State)
		if err != nil {
			return bad(err)
		}
		return adminJSON(http.StatusCreated, map[string]any{"number": n})
	case "POST /runner-groups":
		var in struct {
			Org   string      `json:"org"`
			Group RunnerGroup `json:"group"`
		}
		if err := dec(&in); err != nil || in.Org == "" {
			return adminErr(http.StatusBadRequest, "org is required")
		}
		return adminJSON(http.StatusCreated, map[string]any{"id": e.AddRunnerGroup(in.Org, in.Group)})
	case "POST /runners":
		var in struct {
			Org     string `json:"org"`
			GroupID int64  `json:"group_id"`
			Runner  Runner `json:"runner"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		id := e.AddRunner(in.Org, in.GroupID, in.Runner)
		if id == 0 {
			return adminErr(http.StatusNotFound, "organization or runner group not found")
		}
		return adminJSON(http.StatusCreated, map[string]any{"id": id})
	case "POST /runners/{id}":
		var in struct {
			Org    string `json:"org"`
			Status string `json:"status"`
			Busy   bool   `json:"busy"`
		}
		if err := dec(&in); err != nil {
			return bad(err)
		}
		if err := e.SetRunnerStatus(in.Org, idArg, in.Status, in.Busy); err != nil {
			return adminErr(http.StatusNotFound, "%v", err)
		}
		return adminJSON(http.StatusOK, map[string]any{"id": idArg})
	case "DELETE /runners/{id}":
		org := q.Get("org")
		if err := e.RemoveRunner(org, idArg); err != nil {
			return adminErr(http.StatusNotFound, "%v", err)
		}
		return adminJSON(http.StatusOK, map[string]any{"removed": idArg})
	case "GET /faults":
		return adminJSON(http.StatusOK, e.Faults())
	case "POST /faults":
		var in adminFault
		if err := dec(&in); err != nil {
			return bad(err)
		}
		f, err := in.toFault()
		if err != nil {
			return bad(err)
		}
		if f.Kind == "" {
			return adminErr(http.StatusBadRequest, "kind is required")
		}
		return adminJSON(http.StatusCreated, map[string]any{"id": e.AddFault(f)})
	case "DELETE /faults":
		e.ClearFaults()
		return adminJSON(http.StatusOK, map[string]any{"cleared": true})
	case "DELETE /faults/{id}":
		if !e.RemoveFault(int(idArg)) {
			return adminErr(http.StatusNotFound, "fault %d not found", idArg)
		}
		return adminJSON(http.StatusOK, map[string]any{"removed": idArg})
	case "GET /metrics":
		m := e.Metrics()
		if q.Get("log") == "false" {
			m.Log = nil
		}
		return adminJSON(http.StatusOK, m)
	case "DELETE /metrics", "POST /metrics/{id}":
		e.ResetMetrics()
		return adminJSON(http.StatusOK, map[string]any{"reset": true})
	case "GET /history":
		return adminJSON(http.StatusOK, e.History(q.Get("owner"), q.Get("repo"), q.Get("branch"), q.Get("path")))
	case "GET /secondary-limits", "POST /secondary-limits":
		return e.adminSecondaryLimits(r.Method, dec)
	}
	return adminErr(http.StatusNotFound, "unknown admin endpoint %s %s", r.Method, p)
}

// StateDump is a JSON-friendly snapshot of the emulator's state. It holds
// no secrets: tokens appear by label only.
type StateDump struct {
	Owners        []OwnerDump        `json:"owners"`
	Repos         []RepoDump         `json:"repos"`
	Apps          []AppDump          `json:"apps"`
	Installations []InstallationDump `json:"installations"`
	Tokens        []TokenDump        `json:"tokens"`
	Faults        []FaultStatus      `json:"faults"`
	Now           time.Time          `json:"now"`
}

// OwnerDump describes an owner and its runner groups/runners.
type OwnerDump struct {
	Login        string        `json:"login"`
	ID           int64         `json:"id"`
	Org          bool          `json:"org"`
	RunnerGroups []RunnerGroup `json:"runner_groups,omitempty"`
	Runners      []Runner      `json:"runners,omitempty"`
}

// RepoDump describes a repository: branch heads and the files on each.
type RepoDump struct {
	FullName      string                       `json:"full_name"`
	ID            int64                        `json:"id"`
	DefaultBranch string                       `json:"default_branch"`
	Branches      map[string]string            `json:"branches"`
	Files         map[string]map[string]string `json:"files"` // branch → path → blob sha
	Runs          []Run                        `json:"runs,omitempty"`
	Jobs          []Job                        `json:"jobs,omitempty"`
	Pulls         []PullRequest                `json:"pulls,omitempty"`
	Issues        int                          `json:"issues"`
}

// AppDump describes a registered App.
type AppDump struct {
	ID          int64             `json:"id"`
	Slug        string            `json:"slug"`
	Permissions map[string]string `json:"permissions"`
}

// InstallationDump describes an installation.
type InstallationDump struct {
	ID          int64             `json:"id"`
	AppID       int64             `json:"app_id"`
	Owner       string            `json:"owner"`
	Repos       []string          `json:"repos"` // nil = all
	Permissions map[string]string `json:"permissions"`
}

// TokenDump describes a credential by label (never its secret).
type TokenDump struct {
	Label     string            `json:"label"`
	Kind      string            `json:"kind"`
	Repos     []string          `json:"repos,omitempty"`
	Perms     map[string]string `json:"permissions"`
	ExpiresAt time.Time         `json:"expires_at,omitzero"`
	Expired   bool              `json:"expired"`
}

// State returns a snapshot of the emulator's state for inspection.
func (e *Emulator) State() StateDump {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	d := StateDump{Now: now, Faults: []FaultStatus{}}
	for _, k := range sortedKeys(e.owners) {
		o := e.owners[k]
		od := OwnerDump{Login: o.Login, ID: o.ID, Org: o.Org}
		for _, g := range o.groups {
			od.RunnerGroups = append(od.RunnerGroups, *g)
		}
		for _, r := range o.runners {
			od.Runners = append(od.Runners, r.Runner)
		}
		d.Owners = append(d.Owners, od)
	}
	for _, k := range sortedKeys(e.repos) {
		r := e.repos[k]
		rd := RepoDump{FullName: r.fullName(), ID: r.ID, DefaultBranch: r.DefaultBranch, Branches: map[string]string{}, Files: map[string]map[string]string{}, Issues: len(r.issues)}
		for b, sha := range r.branches {
			rd.Branches[b] = sha
			rd.Files[b] = copyPerms(r.commits[sha].Files)
		}
		for _, id := range r.runOrder {
			rd.Runs = append(rd.Runs, r.runs[id].Run)
		}
		for _, id := range sortedInt64Keys(r.jobs) {
			rd.Jobs = append(rd.Jobs, r.jobs[id].Job)
		}
		for _, n := range sortedIntKeys(r.pulls) {
			rd.Pulls = append(rd.Pulls, *r.pulls[n])
		}
		d.Repos = append(d.Repos, rd)
	}
	for _, id := range sortedInt64Keys(e.apps) {
		a := e.apps[id]
		d.Apps = append(d.Apps, AppDump{ID: a.ID, Slug: a.Slug, Permissions: a.Perms})
	}
	for _, id := range sortedInt64Keys(e.insts) {
		in := e.insts[id]
		d.Installations = append(d.Installations, InstallationDump{ID: in.ID, AppID: in.AppID, Owner: in.Owner.Login, Repos: in.Repos, Permissions: in.Perms})
	}
	for _, cr := range e.tokens {
		kind := "plain"
		if cr.kind == credInstallation {
			kind = "installation"
		}
		d.Tokens = append(d.Tokens, TokenDump{Label: cr.label, Kind: kind, Repos: cr.repos, Perms: cr.perms, ExpiresAt: cr.expires,
			Expired: !cr.expires.IsZero() && !now.Before(cr.expires)})
	}
	sortTokens(d.Tokens)
	for _, fe := range e.faults {
		d.Faults = append(d.Faults, FaultStatus{ID: fe.id, Fault: fe.f, Fired: fe.fired})
	}
	return d
}

func sortTokens(ts []TokenDump) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Label != ts[j].Label {
			return ts[i].Label < ts[j].Label
		}
		return ts[i].ExpiresAt.Before(ts[j].ExpiresAt)
	})
}

func sortedIntKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
