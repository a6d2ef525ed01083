package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// DescriptionFile is the pinned description, relative to the repository
// root (tools/openapi/package-lock.json pins @octokit/openapi).
const DescriptionFile = "tools/openapi/node_modules/@octokit/openapi/generated/api.github.com.json"

// Description is GitHub's REST API description reduced to the operations
// the emulator serves, with one router.
type Description struct {
	doc *openapi3.T
	// Operations are the kept operations, "METHOD /template".
	Operations []string
}

var (
	loadOnce sync.Once
	loaded   *Description
	errLoad  error
)

// Load reads the pinned description once per process (it is 13 MB; the
// reduced document and its router are shared by every caller).
func Load() (*Description, error) {
	loadOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			errLoad = err
			return
		}
		loaded, errLoad = LoadFile(filepath.Join(root, DescriptionFile), emulator.RouteTemplates())
	})
	return loaded, errLoad
}

// repoRoot walks up from the working directory to the directory holding
// go.mod (go test runs in the package directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("openapi: no go.mod above the working directory")
		}
		dir = parent
	}
}

// shape is a path template with every parameter name erased.
var paramRE = regexp.MustCompile(`\{[^}]*\}`)

func shape(p string) string { return paramRE.ReplaceAllString(p, "{}") }

// LoadFile reads the description at path and keeps the operations matching
// templates ("METHOD /path/{x}", compared by shape) and the components they
// reference.
func LoadFile(path string, templates []string) (*Description, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("openapi: read GitHub's API description: %w (run `make openapi`, which runs npm ci in tools/openapi)", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("openapi: decode %s: %w", path, err)
	}
	want := map[string]bool{}
	for _, t := range templates {
		m, p, _ := strings.Cut(t, " ")
		want[strings.ToLower(m)+" "+shape(p)] = true
	}
	paths, _ := raw["paths"].(map[string]any)
	keptPaths := map[string]any{}
	var ops []string
	for p, item := range paths {
		pi, _ := item.(map[string]any)
		keep := map[string]any{}
		for k, v := range pi {
			switch k {
			case "get", "put", "post", "patch", "delete", "head":
				if want[k+" "+shape(p)] {
					keep[k] = v
					ops = append(ops, strings.ToUpper(k)+" "+p)
				}
			}
		}
		if len(keep) == 0 {
			continue
		}
		if params, ok := pi["parameters"]; ok {
			keep["parameters"] = params
		}
		keptPaths[p] = keep
	}
	sort.Strings(ops)
	raw["paths"] = keptPaths
	delete(raw, "webhooks")
	raw["components"] = reachable(raw["components"], keptPaths)
	reduced, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(reduced)
	if err != nil {
		return nil, fmt.Errorf("openapi: load the reduced description: %w", err)
	}
	return &Description{doc: doc, Operations: ops}, nil
}

// restParams are the parameters that take the rest of the path, slashes
// included, as GitHub's routes do (a file path, a ref, a branch name).
var restParams = map[string]bool{"{path}": true, "{ref}": true, "{branch}": true, "{tree_sha}": true}

// findRoute matches req to a described operation: literal segments equal,
// a parameter one segment, a rest parameter (restParams) as the last
// segment takes the rest of the path. Literal matches win over parameters.
func (d *Description) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	parts := strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/")
	var best *routers.Route
	var bestParams map[string]string
	bestScore := -1
	for path, item := range d.doc.Paths.Map() {
		op := item.GetOperation(req.Method)
		if op == nil {
			continue
		}
		segs := strings.Split(strings.Trim(path, "/"), "/")
		params, score, ok := matchSegments(segs, parts)
		if !ok || score <= bestScore {
			continue
		}
		best = &routers.Route{Spec: d.doc, Path: path, PathItem: item, Method: req.Method, Operation: op}
		bestParams, bestScore = params, score
	}
	if best == nil {
		return nil, nil, fmt.Errorf("no described operation matches %s %s", req.Method, req.URL.Path)
	}
	return best, bestParams, nil
}

func matchSegments(segs, parts []string) (map[string]string, int, bool) {
	params := map[string]string{}
	score := 0
	for i, s := range segs {
		isParam := strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")
		if isParam && i == len(segs)-1 && restParams[s] && i < len(parts) {
			rest := make([]string, 0, len(parts)-i)
			for _, p := range parts[i:] {
				u, err := url.PathUnescape(p)
				if err != nil {
					return nil, 0, false
				}
				rest = append(rest, u)
			}
			params[strings.Trim(s, "{}")] = strings.Join(rest, "/")
			return params, score, true
		}
		if i >= len(parts) {
			return nil, 0, false
		}
		if isParam {
			u, err := url.PathUnescape(parts[i])
			if err != nil || u == "" {
				return nil, 0, false
			}
			params[strings.Trim(s, "{}")] = u
			continue
		}
		if s != parts[i] {
			return nil, 0, false
		}
		score++
	}
	return params, score, len(segs) == len(parts)
}

// reachable keeps the components referenced (transitively) from root.
func reachable(components any, root any) map[string]any {
	comps, _ := components.(map[string]any)
	out := map[string]any{}
	seen := map[string]bool{}
	var queue []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				if s, ok := vv.(string); ok && k == "$ref" && strings.HasPrefix(s, "#/components/") && !seen[s] {
					seen[s] = true
					queue = append(queue, s)
				}
				walk(vv)
			}
		case []any:
			for _, vv := range x {
				walk(vv)
			}
		}
	}
	walk(root)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		parts := strings.SplitN(strings.TrimPrefix(ref, "#/components/"), "/", 2)
		if len(parts) != 2 {
			continue
		}
		section, _ := comps[parts[0]].(map[string]any)
		item, ok := section[parts[1]]
		if !ok {
			continue
		}
		dst, _ := out[parts[0]].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
			out[parts[0]] = dst
		}
		dst[parts[1]] = item
		walk(item)
	}
	return out
}

// Exchange is one request and its response.
type Exchange struct {
	Method     string
	URL        *url.URL
	ReqHeader  http.Header
	ReqBody    []byte
	Status     int
	RespHeader http.Header
	RespBody   []byte
}

// Violation kinds.
const (
	// KindOperation: no described operation matches the request.
	KindOperation = "operation-not-described"
	// KindRequest: the request's parameters or body are invalid.
	KindRequest = "request-invalid"
	// KindStatus: the status is not documented for the operation and not
	// in the allowlist.
	KindStatus = "status-undocumented"
	// KindRequired: a required response field is missing.
	KindRequired = "response-required-field"
	// KindBody: any other response body violation (type, enum, format,
	// content type).
	KindBody = "response-invalid"
)

// Violation is one way an exchange departs from the description.
type Violation struct {
	Operation string // "METHOD /template" or the concrete path when undescribed
	Status    int
	Kind      string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s → %d: %s: %s", v.Operation, v.Status, v.Kind, v.Detail)
}

// apiPath maps a request path to the described form: without the GHES
// /api/v3 prefix, and /repositories/{id}/rest (redirects, Link headers) as
// /repos/{owner}/{repo}/rest.
func apiPath(p string) string {
	p = strings.TrimPrefix(p, "/api/v3")
	if rest, ok := strings.CutPrefix(p, "/repositories/"); ok {
		id, tail, _ := strings.Cut(rest, "/")
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			if tail == "" {
				return "/repos/redirected-owner/redirected-repo"
			}
			return "/repos/redirected-owner/redirected-repo/" + tail
		}
	}
	return p
}

// Check validates one exchange against the description and the allowlist.
func (d *Description) Check(ex Exchange) []Violation {
	u := *ex.URL
	u.Scheme, u.Host = "https", "api.github.com"
	u.Path = apiPath(u.Path)
	u.RawPath = ""
	req, err := http.NewRequest(ex.Method, u.String(), bytes.NewReader(ex.ReqBody))
	if err != nil {
		return []Violation{{Operation: ex.Method + " " + ex.URL.Path, Status: ex.Status, Kind: KindOperation, Detail: err.Error()}}
	}
	for k, vs := range ex.ReqHeader {
		req.Header[k] = vs
	}
	if len(ex.ReqBody) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, err := d.findRoute(req)
	if err != nil {
		return []Violation{{Operation: ex.Method + " " + u.Path, Status: ex.Status, Kind: KindOperation, Detail: err.Error()}}
	}
	op := ex.Method + " " + route.Path
	var out []Violation
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		for _, e := range flatten(err) {
			out = append(out, Violation{Operation: op, Status: ex.Status, Kind: KindRequest, Detail: e})
		}
	}
	documented := route.Operation.Responses.Status(ex.Status) != nil
	if !documented {
		if _, ok := Allowed(op, ex.Status); !ok {
			out = append(out, Violation{Operation: op, Status: ex.Status, Kind: KindStatus, Detail: "not documented for the operation and not in the allowlist"})
		}
		return out
	}
	if skipBody(ex) {
		return out
	}
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: ex.Status, Header: ex.RespHeader,
		Body:    io.NopCloser(bytes.NewReader(ex.RespBody)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
		for _, e := range flatten(err) {
			if ambiguousOneOf(e) {
				continue
			}
			kind := KindBody
			if strings.Contains(e, "is missing") {
				kind = KindRequired
			}
			out = append(out, Violation{Operation: op, Status: ex.Status, Kind: kind, Detail: e})
		}
	}
	return out
}

// ambiguousOneOf reports kin-openapi's "matches more than one schema from
// oneOf": GitHub's description offers alternatives that both accept the
// body (for example basic-error and a rule-violation error, neither closed
// to extra properties), an ambiguity of the description, not of the answer.
func ambiguousOneOf(detail string) bool {
	return strings.Contains(detail, `matches more than one schema from "oneOf"`)
}

// skipBody reports a response whose body the description cannot check: no
// body (304, 204, a HEAD) or a raw media type, which GitHub documents only in
// prose ("application/vnd.github.raw+json ... Returns the raw file
// contents").
func skipBody(ex Exchange) bool {
	if len(ex.RespBody) == 0 || ex.Status == http.StatusNotModified || ex.Status == http.StatusNoContent {
		return true
	}
	ct := strings.ToLower(ex.RespHeader.Get("Content-Type"))
	return !strings.Contains(ct, "json") || strings.Contains(ct, "vnd.github.raw")
}

// flatten turns kin-openapi's (multi-)errors into one line each.
func flatten(err error) []string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []string
		for _, e := range me {
			out = append(out, flatten(e)...)
		}
		return out
	}
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		if errors.As(re.Err, &me) {
			return flatten(me)
		}
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		var inner openapi3.MultiError
		if errors.As(se.Origin, &inner) {
			return flatten(inner)
		}
		return []string{oneLine(fmt.Sprintf("%s: %s", "/"+strings.Join(se.JSONPointer(), "/"), se.Reason))}
	}
	return []string{oneLine(err.Error())}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
