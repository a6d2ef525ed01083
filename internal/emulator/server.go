package emulator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// documentation URLs used in error bodies.
const (
	docsBase           = "https://docs.github.com/rest"
	docsContentsPut    = "https://docs.github.com/rest/repos/contents#create-or-update-file-contents"
	docsRateLimits     = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
	docsSecondaryLimit = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	maxBodyBytes       = 32 << 20
)

// supportedAPIVersions are the REST API versions GitHub accepts in
// X-GitHub-Api-Version (notes B.9; https://github.blog/changelog/2026-03-12-rest-api-version-2026-03-10-is-now-available).
var supportedAPIVersions = map[string]bool{"2022-11-28": true, "2026-03-10": true}

// response is what a handler produces; the pipeline adds the common headers.
type response struct {
	status   int
	header   http.Header
	body     []byte
	conflict bool // 409/422 on a contents PUT
	// ruleRefusal: a write refused by a branch rule (rules.go); counted in
	// Metrics.RuleRefusals.
	ruleRefusal bool
	// headConflict: a contents write lost the branch-head race (409 "is at
	// X but expected Y"); counted in Metrics.BranchHeadConflicts.
	headConflict bool
	// lagged: a contents read served by a lagging replica (Options.ReplicaLag).
	lagged   bool
	noCharge bool // never counted against the primary limit
}

type outcome int

const (
	outcomeNormal  outcome = iota
	outcomeLost            // response computed (write applied) but dropped
	outcomeReset           // connection closed without a response
	outcomeStalled         // hung until the request context ended
)

func (o outcome) String() string {
	return [...]string{"ok", "response_lost", "connection_reset", "stalled"}[o]
}

// reqCtx carries one REST request through a handler. Handlers run with e.mu
// held, which is what makes each compare-and-swap atomic.
type reqCtx struct {
	e       *Emulator
	r       *http.Request
	body    []byte
	params  map[string]string
	query   url.Values
	cred    *credential
	apiBase string // e.g. "http://127.0.0.1:8080" or ".../api/v3"
	webBase string
	reqID   string
	stale   int // StaleRead fault: versions back (0 = none)
	route   *route
	apiVer  string
	authKey string // secondary-limit concurrency key (a hash, never the header)
	// commitBase is the branch head a contents write read on arrival
	// (Options.CommitLatency); "" when not modeled.
	commitBase string
}

func (c *reqCtx) api(format string, a ...any) string { return c.apiBase + fmt.Sprintf(format, a...) }
func (c *reqCtx) web(format string, a ...any) string { return c.webBase + fmt.Sprintf(format, a...) }
func nodeID(kind, key string) string {
	return base64.RawStdEncoding.EncodeToString([]byte(kind + ":" + key))
}
func (c *reqCtx) qInt(name string, def int) int {
	v, err := strconv.Atoi(c.query.Get(name))
	if err != nil || v <= 0 {
		return def
	}
	return v
}

func (c *reqCtx) json(status int, v any) *response {
	b, err := json.Marshal(v)
	if err != nil {
		return c.errorf(http.StatusInternalServerError, "emulator: encode: %v", err)
	}
	return c.jsonBytes(status, b)
}

// jsonBytes answers with an already encoded JSON body.
func (c *reqCtx) jsonBytes(status int, b []byte) *response {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: status, header: h, body: b}
}

// errorf returns a GitHub-shaped error: {"message","documentation_url","status"}.
func (c *reqCtx) errorf(status int, format string, a ...any) *response {
	return errorResponse(status, fmt.Sprintf(format, a...), docsBase)
}

func errorResponse(status int, msg, doc string) *response {
	b, _ := json.Marshal(map[string]string{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)})
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: status, header: h, body: b}
}

func (c *reqCtx) notFound() *response { return c.errorf(http.StatusNotFound, "Not Found") }

// validationError is one entry of a 422 body's errors[]
// (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api#validation-failed,
// recorded in @octokit/fixtures' "errors" scenario:
// {"message":"Validation Failed","errors":[{"resource":"Label","code":"invalid","field":"color"}]}).
type validationError struct {
	Resource string `json:"resource"`
	Field    string `json:"field,omitempty"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

// validationFailed is GitHub's 422 "Validation Failed" with errors[].
func (c *reqCtx) validationFailed(errs ...validationError) *response {
	b, _ := json.Marshal(map[string]any{"message": "Validation Failed", "errors": errs, "documentation_url": docsBase, "status": "422"})
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: http.StatusUnprocessableEntity, header: h, body: b}
}

func (c *reqCtx) validation(msg string) *response {
	return c.errorf(http.StatusUnprocessableEntity, "%s", msg)
}

// forbidden is GitHub's answer when a token lacks a permission; it names the
// permission GitHub would have accepted.
func (c *reqCtx) forbidden(perm, level string) *response {
	resp := c.errorf(http.StatusForbidden, "Resource not accessible by integration")
	if perm != "" {
		resp.header.Set("X-Accepted-GitHub-Permissions", perm+"="+level)
	}
	return resp
}

func (c *reqCtx) decode(v any) *response {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return c.errorf(http.StatusBadRequest, "Problems parsing JSON")
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		return c.errorf(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

// repo resolves {owner}/{repo} for a token credential and checks access:
// an unknown or invisible repository is 404 (GitHub hides private
// repositories), a missing permission is 403 "Resource not accessible by
// integration".
func (c *reqCtx) repo(perm, level string) (*repo, *response) {
	r, ok := c.e.repos[repoKey(c.params["owner"], c.params["repo"])]
	if c.cred == nil {
		return nil, c.notFound()
	}
	if c.cred.kind == credApp {
		return nil, c.forbidden("", "")
	}
	if !ok {
		if resp := c.redirectLocked(); resp != nil {
			return nil, resp
		}
	}
	if !ok || !c.cred.canSee(r) {
		return nil, c.notFound()
	}
	if !c.cred.has(perm, level) {
		return nil, c.forbidden(perm, level)
	}
	return r, nil
}

// Handler returns the REST API (at "/" and "/api/v3/") and the admin API (at
// "/_emulator/"). Faults that drop the response (TransportReset,
// WriteAcceptedResponseLost, Stall) hijack and close the connection, or
// abort the handler with http.ErrAbortHandler when hijacking is unsupported.
func (e *Emulator) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, oc := e.process(r)
		if oc != outcomeNormal {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		for k, vs := range resp.header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
	})
}

// Serve runs a real HTTP server on l until ctx is done, then shuts it down.
func (e *Emulator) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-errc
		return nil
	}
}

// bases derives the API base URL (scheme://host[/api/v3]) and web base.
func (e *Emulator) bases(r *http.Request, prefixed bool) (string, string) {
	scheme, host := r.URL.Scheme, r.URL.Host
	if host == "" {
		host = r.Host
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	if scheme == "" {
		scheme = "http"
	}
	origin := scheme + "://" + host
	api := origin
	if prefixed {
		api += "/api/v3"
	}
	web := e.serverURL
	if web == "" {
		web = origin
	}
	return api, web
}

// process runs the whole pipeline for one request: routing, faults, user
// agent, auth, rate limit, handler, conditional request, headers, metrics.
func (e *Emulator) process(r *http.Request) (*response, outcome) {
	p := r.URL.Path
	prefixed := false
	if strings.HasPrefix(p, "/api/v3/") || p == "/api/v3" {
		p = strings.TrimPrefix(p, "/api/v3")
		prefixed = true
	}
	if p == "/_emulator" || strings.HasPrefix(p, "/_emulator/") {
		return e.admin(r, strings.TrimPrefix(p, "/_emulator")), outcomeNormal
	}
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	}
	escaped := r.URL.EscapedPath()
	if prefixed {
		escaped = strings.TrimPrefix(escaped, "/api/v3")
	}
	p, escaped, _ = e.resolveRepositoriesPath(p, escaped)
	rt, params := matchRoute(r.Method, escaped, false)
	routeName := "unknown"
	if rt != nil {
		routeName = rt.method + " " + rt.display
	}
	apiBase, webBase := e.bases(r, prefixed)
	c := &reqCtx{e: e, r: r, body: body, params: params, query: r.URL.Query(), apiBase: apiBase, webBase: webBase, route: rt}
	c.apiVer = r.Header.Get("X-GitHub-Api-Version")

	key := authKey(r)
	e.mu.Lock()
	c.reqID = e.requestIDLocked()
	plan := e.planFaultsLocked(r.Method, p, rt)
	e.sec.arriveLocked(key)
	commitLatency := e.opts.CommitLatency > 0 && isContentsWrite(rt) && plan.terminal == nil
	if commitLatency {
		c.commitBase = e.commitBaseLocked(params, body)
	}
	e.mu.Unlock()
	c.authKey = key
	defer func() {
		e.mu.Lock()
		e.sec.leaveLocked(key)
		e.mu.Unlock()
	}()
	c.stale = plan.stale

	rec := RequestRecord{ID: c.reqID, Method: r.Method, Route: routeName, Path: p, APIVersion: c.apiVer}
	if plan.latency > 0 {
		if err := e.clk.Sleep(r.Context(), plan.latency); err != nil {
			e.finishRecord(&rec, nil, plan, outcomeStalled)
			return nil, outcomeStalled
		}
	}
	if commitLatency {
		// The write builds its commit on the head it read on arrival;
		// another commit landing meanwhile makes it lose the ref update.
		if err := e.clk.Sleep(r.Context(), e.opts.CommitLatency); err != nil {
			e.finishRecord(&rec, nil, plan, outcomeStalled)
			return nil, outcomeStalled
		}
	}
	if plan.terminal != nil {
		switch plan.terminal.Kind {
		case Stall:
			<-r.Context().Done()
			e.finishRecord(&rec, nil, plan, outcomeStalled)
			return nil, outcomeStalled
		case TransportReset:
			e.finishRecord(&rec, nil, plan, outcomeReset)
			return nil, outcomeReset
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	resp := e.handleLocked(c, rt, plan, &rec)
	e.finalizeLocked(c, resp, &rec)
	oc := outcomeNormal
	if plan.lost {
		oc = outcomeLost
	}
	e.recordLocked(&rec, resp, plan, oc)
	return resp, oc
}

// finishRecord records a request that produced no response.
func (e *Emulator) finishRecord(rec *RequestRecord, resp *response, plan faultPlan, oc outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recordLocked(rec, resp, plan, oc)
}

func (e *Emulator) handleLocked(c *reqCtx, rt *route, plan faultPlan, rec *RequestRecord) *response {
	// GitHub rejects requests without a User-Agent header with 403:
	// https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent
	// (also observed in https://github.com/vert-x3/vertx-web/issues/517).
	if !e.opts.AllowMissingUserAgent && c.r.Header.Get("User-Agent") == "" {
		resp := errorResponse(http.StatusForbidden, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.", docsBase)
		resp.noCharge = true
		return resp
	}
	cred, authErr := e.authenticateLocked(c.r)
	c.cred = cred
	if cred != nil {
		rec.Credential = cred.label
	}
	if plan.terminal != nil {
		return e.faultResponseLocked(c, plan.terminal)
	}
	if authErr != nil {
		return authErr
	}
	if c.apiVer != "" && !supportedAPIVersions[c.apiVer] {
		resp := c.errorf(http.StatusBadRequest, "API version %s is not supported.", c.apiVer)
		resp.noCharge = true
		return resp
	}
	if rt == nil {
		return c.notFound()
	}
	if rt.auth == authJWT && (cred == nil || cred.kind != credApp) {
		resp := c.errorf(http.StatusUnauthorized, "A JSON web token could not be decoded")
		resp.noCharge = true
		return resp
	}
	if resp := e.secondaryLocked(c, rt, cred, c.authKey, rec); resp != nil {
		return resp
	}
	if cred != nil && !rt.free {
		b := e.bucketLocked(cred)
		if b.remaining() <= 0 {
			return e.primaryLimitResponse(c, cred)
		}
	}
	resp := rt.h(c)
	if rt.free {
		resp.noCharge = true
	}
	return resp
}

// finalizeLocked applies ETag / If-None-Match, charges the primary limit and
// sets the headers every GitHub response carries.
func (e *Emulator) finalizeLocked(c *reqCtx, resp *response, rec *RequestRecord) {
	h := resp.header
	if h == nil {
		h = http.Header{}
		resp.header = h
	}
	// Conditional requests: https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate
	// "Making a conditional request does not count against your primary rate
	// limit if a 304 response is returned." ETags are token specific
	// (https://github.com/eclipse-csi/otterdog/issues/201), so the credential
	// is part of the hash.
	//
	// GitHub's recorded answers (@octokit/fixtures, scenarios get-content,
	// get-repository, create-file, rename-repository) carry a strong ETag,
	// "<hex>", and Cache-Control "private, max-age=60, s-maxage=60" on every
	// 2xx answer with a body, writes included; redirects, 204s and errors
	// carry neither.
	if resp.status >= 200 && resp.status < 300 && resp.status != http.StatusNoContent && len(resp.body) > 0 {
		sum := sha256.New()
		if c.cred != nil {
			fmt.Fprintf(sum, "%d\x00", c.cred.id)
		}
		fmt.Fprintf(sum, "%s\x00", c.r.Header.Get("Accept"))
		sum.Write(resp.body)
		etag := `"` + hex.EncodeToString(sum.Sum(nil)) + `"`
		h.Set("ETag", etag)
		h.Set("Cache-Control", "private, max-age=60, s-maxage=60")
		h.Set("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
		if inm := c.r.Header.Get("If-None-Match"); c.r.Method == http.MethodGet && resp.status == http.StatusOK && inm != "" && etagMatches(inm, etag) {
			resp.status = http.StatusNotModified
			resp.body = nil
			h.Del("Content-Type")
			resp.noCharge = true
		}
	}
	if c.cred != nil {
		b := e.bucketLocked(c.cred)
		charged := !resp.noCharge && resp.status != http.StatusUnauthorized && b.remaining() > 0
		if charged {
			b.used++
		}
		rec.Charged = charged
		rec.RateLimitRemaining = b.remaining()
		setRateHeaders(h, b)
	} else {
		setRateHeaders(h, &bucket{limit: 60, reset: e.now().Add(time.Hour), resource: "core"})
		rec.RateLimitRemaining = 60
	}
	h.Set("X-GitHub-Request-Id", c.reqID)
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	ver := c.apiVer
	if ver == "" || !supportedAPIVersions[ver] {
		ver = DefaultAPIVersion
	}
	h.Set("X-GitHub-Api-Version-Selected", ver)
	h.Set("Date", e.now().Format(http.TimeFormat))
	h.Set("Server", "github-emulator")
	if h.Get("Content-Type") == "" && resp.status != http.StatusNotModified && resp.status != http.StatusNoContent {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	if ra := h.Get("Retry-After"); ra != "" {
		rec.RetryAfterUntil = retryAfterUntil(ra, e.now())
	} else if resp.status == http.StatusForbidden && h.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			rec.RetryAfterUntil = time.Unix(n, 0).UTC()
		}
	}
}

func etagMatches(header, etag string) bool {
	strip := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, cand := range strings.Split(header, ",") {
		if strings.TrimSpace(cand) == "*" || strip(cand) == strip(etag) {
			return true
		}
	}
	return false
}

func retryAfterUntil(v string, now time.Time) time.Time {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return now.Add(time.Duration(n) * time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

func (e *Emulator) requestIDLocked() string {
	e.reqSeq++
	return fmt.Sprintf("%04X:%04X:%06X:%07X:%08X", e.rng.Intn(0x10000), e.rng.Intn(0x10000), e.rng.Intn(0x1000000), e.reqSeq, e.rng.Uint32())
}

// ErrConnectionReset is returned by Transport() for the TransportReset fault.
var ErrConnectionReset = errors.New("emulator: connection reset by peer")

// ErrResponseLost is returned by Transport() for the
// WriteAcceptedResponseLost fault: the request was applied but its response
// never arrived.
var ErrResponseLost = errors.New("emulator: connection closed after the request was accepted (response lost)")
