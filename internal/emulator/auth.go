package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

type credKind int

const (
	credInstallation credKind = iota
	credPlain
	credApp
)

// credential is an authenticated identity. Its secret is only the map key in
// Emulator.tokens; label is what metrics, history and the state dump show.
type credential struct {
	kind     credKind
	id       int64 // unique per credential (ETags are token specific)
	label    string
	inst     *installation
	app      *app
	repos    []string // lower-case "owner/name"; nil = every repository in reach
	perms    map[string]string
	expires  time.Time // zero = never
	botLogin string
	botID    int64
	bucket   string
	limit    int
}

// TokenScope describes a plain token registered with AddToken, typically a
// workflow's GITHUB_TOKEN.
type TokenScope struct {
	// Label names the token in metrics and history as "token:<Label>".
	// Default: "token:<n>".
	Label string `json:"label"`
	// Repos lists the "owner/name" repositories the token can reach; nil or
	// empty means every repository (a GITHUB_TOKEN names exactly its own).
	Repos []string `json:"repos"`
	// Permissions maps permission → "read" | "write" | "admin" (metadata:read
	// is implied). nil means DefaultWorkflowPermissions().
	Permissions map[string]string `json:"permissions"`
	// BotLogin authors issues created with the token. Default
	// "github-actions[bot]".
	BotLogin string `json:"bot_login"`
	// BotID is the author's user id. Default 41898282.
	BotID int64 `json:"bot_id"`
	// ExpiresAt ends the token's validity (zero = never). GITHUB_TOKEN
	// expires when the job finishes or after 24h (notes B.10).
	ExpiresAt time.Time `json:"expires_at"`
	// RateLimit is the hourly primary limit. Default 1000, GITHUB_TOKEN's
	// documented limit per repository.
	RateLimit int `json:"rate_limit"`
}

// DefaultWorkflowPermissions is the permission set of a plain token when
// TokenScope.Permissions is nil (the permissive GITHUB_TOKEN default for the
// scopes this suite uses).
func DefaultWorkflowPermissions() map[string]string {
	return map[string]string{"contents": "write", "metadata": "read", "actions": "read", "pull_requests": "write", "issues": "write"}
}

// AddToken registers a plain bearer token (e.g. a workflow's GITHUB_TOKEN).
func (e *Emulator) AddToken(token string, scope TokenScope) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID++
	id := e.nextID
	label := "token:" + scope.Label
	if scope.Label == "" {
		label = fmt.Sprintf("token:%d", id)
	}
	perms := scope.Permissions
	if perms == nil {
		perms = DefaultWorkflowPermissions()
	}
	var repos []string
	for _, r := range scope.Repos {
		repos = append(repos, strings.ToLower(r))
	}
	c := &credential{kind: credPlain, id: id, label: label, repos: repos, perms: copyPerms(perms), expires: scope.ExpiresAt,
		botLogin: scope.BotLogin, botID: scope.BotID, bucket: label, limit: scope.RateLimit}
	if c.botLogin == "" {
		c.botLogin, c.botID = WorkflowBotLogin, WorkflowBotID
	}
	if c.botID == 0 {
		c.botID = id
	}
	if c.limit <= 0 {
		c.limit = DefaultWorkflowTokenRateLimit
	}
	e.tokens[token] = c
}

// RevokeToken makes token unknown (subsequent requests get 401).
func (e *Emulator) RevokeToken(token string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.tokens, token)
}

func (cr *credential) canSee(r *repo) bool {
	switch cr.kind {
	case credInstallation:
		if !cr.inst.covers(r) {
			return false
		}
	case credApp:
		return false
	}
	if len(cr.repos) == 0 {
		return true
	}
	full := strings.ToLower(r.fullName())
	for _, n := range cr.repos {
		if n == full {
			return true
		}
	}
	return false
}

var permRank = map[string]int{"read": 1, "write": 2, "admin": 3}

func (cr *credential) has(perm, level string) bool {
	if perm == "" {
		return true
	}
	if perm == "metadata" && cr.kind != credApp {
		return true // every installation token and GITHUB_TOKEN can read metadata
	}
	return permRank[cr.perms[perm]] >= permRank[level]
}

// authenticateLocked resolves the Authorization header. No header → (nil,
// nil). An unknown, malformed or expired credential → 401.
func (e *Emulator) authenticateLocked(r *http.Request) (*credential, *response) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	scheme, tok, _ := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) || tok == "" {
		return nil, badCredentials()
	}
	if strings.Count(tok, ".") == 2 && strings.HasPrefix(tok, "eyJ") {
		return e.verifyJWTLocked(tok)
	}
	cr, ok := e.tokens[tok]
	if !ok || (!cr.expires.IsZero() && !e.now().Before(cr.expires)) {
		return nil, badCredentials()
	}
	return cr, nil
}

func badCredentials() *response {
	resp := errorResponse(http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
	resp.noCharge = true
	return resp
}

func jwtError(msg string) *response {
	resp := errorResponse(http.StatusUnauthorized, msg, "https://docs.github.com/rest")
	resp.noCharge = true
	return resp
}

// jwtSkew is the clock-drift allowance for iat and exp. GitHub recommends
// setting iat 60 seconds in the past and caps exp at 10 minutes:
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
const (
	jwtSkew   = 60 * time.Second
	jwtMaxTTL = 10 * time.Minute
)

var errUnknownApp = errors.New("unknown app")

// verifyJWTLocked verifies an App JWT: RS256 signature against the
// registered key of the App named by iss (string or number), iat not in the
// future and exp in the future (both with jwtSkew), exp-iat at most 10 min.
func (e *Emulator) verifyJWTLocked(raw string) (*credential, *response) {
	claims := jwt.MapClaims{}
	var a *app
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation(), jwt.WithJSONNumber())
	_, err := parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		id, ok := numericClaim(claims["iss"])
		if !ok {
			return nil, errUnknownApp
		}
		a = e.apps[id]
		if a == nil || a.Key == nil {
			return nil, errUnknownApp
		}
		return a.Key, nil
	})
	if err != nil {
		if a == nil && errors.Is(err, errUnknownApp) {
			return nil, jwtError("Integration not found")
		}
		return nil, jwtError("A JSON web token could not be decoded")
	}
	now := e.now()
	iat, ok := numericClaim(claims["iat"])
	if !ok || time.Unix(iat, 0).After(now.Add(jwtSkew)) {
		return nil, jwtError("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.")
	}
	exp, ok := numericClaim(claims["exp"])
	if !ok || !time.Unix(exp, 0).After(now.Add(-jwtSkew)) {
		return nil, jwtError("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.")
	}
	if time.Unix(exp, 0).Sub(time.Unix(iat, 0)) > jwtMaxTTL || time.Unix(exp, 0).After(now.Add(jwtMaxTTL+jwtSkew)) {
		return nil, jwtError("'Expiration time' claim ('exp') is too far in the future.")
	}
	label := fmt.Sprintf("app:%d", a.ID)
	return &credential{kind: credApp, id: -a.ID, label: label, app: a, bucket: label, limit: e.opts.AppRateLimit}, nil
}

func numericClaim(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil {
			return int64(f), true
		}
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case float64:
		return int64(x), true
	}
	return 0, false
}

// --- App endpoints ---

func (c *reqCtx) ownerJSON(o *owner) map[string]any {
	typ := "User"
	if o.Org {
		typ = "Organization"
	}
	return c.userJSON(o.Login, o.ID, typ)
}

func (c *reqCtx) installationJSON(in *installation) map[string]any {
	a := c.e.apps[in.AppID]
	sel := "all"
	if in.Repos != nil {
		sel = "selected"
	}
	typ := "User"
	if in.Owner.Org {
		typ = "Organization"
	}
	return map[string]any{
		"id": in.ID, "account": c.ownerJSON(in.Owner), "repository_selection": sel,
		"access_tokens_url": c.api("/app/installations/%d/access_tokens", in.ID),
		"repositories_url":  c.api("/installation/repositories"),
		"html_url":          c.web("/organizations/%s/settings/installations/%d", in.Owner.Login, in.ID),
		"app_id":            in.AppID, "app_slug": a.Slug, "target_id": in.Owner.ID, "target_type": typ,
		"permissions": in.Perms, "events": []string{}, "created_at": in.Created.Format(time.RFC3339),
		"updated_at": in.Created.Format(time.RFC3339), "single_file_name": nil, "suspended_at": nil, "suspended_by": nil,
	}
}

// GET /app — https://docs.github.com/en/rest/apps/apps#get-the-authenticated-app
func hGetApp(c *reqCtx) *response {
	a := c.cred.app
	return c.json(http.StatusOK, map[string]any{"id": a.ID, "slug": a.Slug, "name": a.Name, "node_id": nodeID("App", a.Slug),
		"permissions": a.Perms, "events": []string{}, "html_url": c.web("/apps/%s", a.Slug), "installations_count": c.e.countInstallationsLocked(a.ID)})
}

func (e *Emulator) countInstallationsLocked(appID int64) int {
	n := 0
	for _, in := range e.insts {
		if in.AppID == appID {
			n++
		}
	}
	return n
}

// GET /app/installations
func hListInstallations(c *reqCtx) *response {
	out := []any{}
	for _, id := range sortedInt64Keys(c.e.insts) {
		if in := c.e.insts[id]; in.AppID == c.cred.app.ID {
			out = append(out, c.installationJSON(in))
		}
	}
	return c.json(http.StatusOK, out)
}

func (c *reqCtx) installationParam() *installation {
	id, err := strconv.ParseInt(c.params["installation_id"], 10, 64)
	if err != nil {
		return nil
	}
	in := c.e.insts[id]
	if in == nil || in.AppID != c.cred.app.ID {
		return nil
	}
	return in
}

// GET /app/installations/{installation_id}
func hGetInstallation(c *reqCtx) *response {
	in := c.installationParam()
	if in == nil {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.installationJSON(in))
}

// GET /repos/{owner}/{repo}/installation (E1) — 404 when the App is not
// installed on the repository:
// https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app
func hRepoInstallation(c *reqCtx) *response {
	r, ok := c.e.repos[repoKey(c.params["owner"], c.params["repo"])]
	if !ok {
		return c.notFound()
	}
	for _, id := range sortedInt64Keys(c.e.insts) {
		if in := c.e.insts[id]; in.AppID == c.cred.app.ID && in.covers(r) {
			return c.json(http.StatusOK, c.installationJSON(in))
		}
	}
	return c.notFound()
}

// GET /orgs/{org}/installation (E3) and GET /users/{username}/installation.
func hOwnerInstallation(c *reqCtx) *response {
	o, ok := c.e.owners[strings.ToLower(c.params["org"])]
	if !ok || (strings.HasPrefix(c.route.pattern, "/orgs/") && !o.Org) {
		return c.notFound()
	}
	for _, id := range sortedInt64Keys(c.e.insts) {
		if in := c.e.insts[id]; in.AppID == c.cred.app.ID && in.Owner == o {
			return c.json(http.StatusOK, c.installationJSON(in))
		}
	}
	return c.notFound()
}

// POST /app/installations/{installation_id}/access_tokens (E2, E4):
// https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app
// Tokens last one hour. Requested repositories must be reachable by the
// installation and requested permissions must not exceed it, else 422.
func hCreateAccessToken(c *reqCtx) *response {
	in := c.installationParam()
	if in == nil {
		return c.notFound()
	}
	var body struct {
		Repositories  []string          `json:"repositories"`
		RepositoryIDs []int64           `json:"repository_ids"`
		Permissions   map[string]string `json:"permissions"`
	}
	if len(c.body) > 0 {
		if resp := c.decode(&body); resp != nil {
			return resp
		}
	}
	const notAccessible = "There is at least one repository that does not exist or is not accessible to the parent installation."
	var selected []*repo
	for _, name := range body.Repositories {
		r, ok := c.e.repos[repoKey(in.Owner.Login, name)]
		if !ok || !in.covers(r) {
			return c.validation(notAccessible)
		}
		selected = append(selected, r)
	}
	for _, id := range body.RepositoryIDs {
		var found *repo
		for _, k := range sortedKeys(c.e.repos) {
			if r := c.e.repos[k]; r.ID == id && in.covers(r) {
				found = r
			}
		}
		if found == nil {
			return c.validation(notAccessible)
		}
		selected = append(selected, found)
	}
	perms := copyPerms(in.Perms)
	if len(body.Permissions) > 0 {
		perms = map[string]string{}
		for k, v := range body.Permissions {
			if permRank[v] == 0 || permRank[in.Perms[k]] < permRank[v] {
				return c.validation("The permissions requested are not granted to this installation.")
			}
			perms[k] = v
		}
	}
	e := c.e
	e.nextID++
	a := e.apps[in.AppID]
	cr := &credential{kind: credInstallation, id: e.nextID, label: fmt.Sprintf("installation:%d", in.ID), inst: in, perms: perms,
		expires: e.now().Add(time.Hour).Truncate(time.Second), botLogin: a.Slug + "[bot]", botID: 100000000 + a.ID,
		bucket: fmt.Sprintf("installation:%d", in.ID), limit: e.opts.InstallationRateLimit}
	sel := "all"
	if in.Repos != nil {
		sel = "selected"
	}
	out := map[string]any{"expires_at": cr.expires.Format(time.RFC3339), "permissions": perms}
	if selected != nil {
		sel = "selected"
		repos := []any{}
		for _, r := range selected {
			cr.repos = append(cr.repos, strings.ToLower(r.fullName()))
			repos = append(repos, c.repoJSON(r))
		}
		out["repositories"] = repos
	}
	out["repository_selection"] = sel
	tok := "ghs_" + e.randomStringLocked(36)
	e.tokens[tok] = cr
	out["token"] = tok
	return c.json(http.StatusCreated, out)
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (e *Emulator) randomStringLocked(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = tokenAlphabet[e.rng.Intn(len(tokenAlphabet))]
	}
	return string(b)
}

func sortedInt64Keys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
