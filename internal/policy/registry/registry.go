package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds and names of the registry (enrollment contract "Registry").
const (
	// Path is the registry's path in the lock repository (on its default
	// branch, reviewed like code; locks/ because the design card fixes the
	// repository's top level).
	Path = "locks/unity-enrollment-policy.json"
	// MaxBytes is the largest registry accepted (64 KiB).
	MaxBytes = 65536
	// SchemaVersion is the only schema this codec reads and writes.
	SchemaVersion = 1
	// MaxRepositories bounds the perimeter: the drift issue reports at most
	// 64 repositories, so a larger registry could never be reported whole.
	MaxRepositories = 64
	// MaxExceptions bounds the exception list.
	MaxExceptions = 256
	// MaxApprovedShas bounds each approved-pin list.
	MaxApprovedShas = 256
)

// Classification is an exception's inventory class.
type Classification string

// Exception classes. controlled-canary and non-licensing-static are never
// granted by an exception: the first comes from a dispatch-only trigger, the
// second is the default.
const (
	// Synthetic marks a Unity-shaped workflow that runs no paid work (a test
	// double, a template).
	Synthetic Classification = "synthetic"
	// Disabled marks a Unity-shaped workflow that cannot run (disabled in
	// the repository settings, kept for reference).
	Disabled Classification = "disabled"
)

// Registry is a validated enrollment registry.
type Registry struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schemaVersion"`
	// Organization is the owner every repository belongs to.
	Organization string `json:"organization"`
	// ApprovedLockShas are the lock-repository commits consumers may pin
	// for any lock action.
	ApprovedLockShas []string `json:"approvedLockShas"`
	// ApprovedReturnShas are the narrower pins allowed for
	// return-unity-license (each also in ApprovedLockShas).
	ApprovedReturnShas []string `json:"approvedReturnShas"`
	// Repositories are the enrolled repositories, sorted case-insensitively.
	Repositories []Repository `json:"repositories"`
	// Exceptions are owned, expiring classifications of Unity-shaped
	// workflows that run no paid work, sorted by repository and path.
	Exceptions []Exception `json:"exceptions"`
}

// Repository is one enrolled repository.
type Repository struct {
	// Repository is "owner/name", spelled as GitHub spells it.
	Repository string `json:"repository"`
	// DefaultBranch is the protected branch the audit reads and the only
	// branch a licensed push trigger may name.
	DefaultBranch string `json:"defaultBranch"`
	// Fork is GitHub's fork flag, recorded at onboarding.
	Fork bool `json:"fork"`
	// AllowWorkflowDispatch admits workflow_dispatch as a licensed trigger
	// (a controlled canary).
	AllowWorkflowDispatch bool `json:"allowWorkflowDispatch"`
}

// Exception classifies one Unity-shaped workflow file as synthetic or
// disabled until it expires.
type Exception struct {
	// Repository is a registered repository, spelled exactly as registered.
	Repository string `json:"repository"`
	// Path is the workflow file (.github/workflows/<file>.yml or .yaml).
	Path string `json:"path"`
	// Classification is Synthetic or Disabled.
	Classification Classification `json:"classification"`
	// Owner is the reviewer's GitHub login.
	Owner string `json:"owner"`
	// ExpiresAt is an RFC 3339 time; the exception stops applying at it.
	ExpiresAt string `json:"expiresAt"`
}

// Expiry parses ExpiresAt (validated by Decode).
func (e Exception) Expiry() time.Time {
	t, _ := time.Parse(time.RFC3339, e.ExpiresAt)
	return t
}

// Expired reports whether the exception no longer applies at now.
func (e Exception) Expired(now time.Time) bool { return !now.Before(e.Expiry()) }

// Code is a stable reason a registry is refused.
type Code string

// Decode error codes.
const (
	// CodeSize: empty or larger than MaxBytes.
	CodeSize Code = "registry-size"
	// CodeSyntax: not exactly one JSON object, or not UTF-8.
	CodeSyntax Code = "registry-syntax"
	// CodeDuplicateKey: a JSON object repeats a key.
	CodeDuplicateKey Code = "registry-duplicate-key"
	// CodeUnknownField: a field this schema does not define.
	CodeUnknownField Code = "registry-unknown-field"
	// CodeSchema: schemaVersion is not 1.
	CodeSchema Code = "registry-schema"
	// CodeOrganization: the organization is missing, malformed or not the
	// expected owner.
	CodeOrganization Code = "registry-organization"
	// CodeApprovedSha: an approved pin list breaks a rule.
	CodeApprovedSha Code = "registry-approved-sha"
	// CodeRepository: a repository row breaks a rule.
	CodeRepository Code = "registry-repository"
	// CodeException: an exception row breaks a rule.
	CodeException Code = "registry-exception"
)

// Error is a refused registry. Message names the field and the rule, never
// more of the document than the offending identifier.
type Error struct {
	Code    Code
	Message string
}

// Error implements error.
func (e *Error) Error() string { return "registry: " + string(e.Code) + ": " + e.Message }

// ErrInvalid is matched by every *Error (errors.Is(err, ErrInvalid)).
var ErrInvalid = errors.New("registry: invalid enrollment registry")

// Is makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// CodeOf returns the Code of a registry error, or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func fail(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

var (
	loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	shaRE   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	// workflowPathRE: GitHub loads workflows only from the top level of
	// .github/workflows, with a .yml or .yaml extension.
	workflowPathRE = regexp.MustCompile(`^\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml$`)
)

// ValidLogin reports whether s is a GitHub login (user or organization).
func ValidLogin(s string) bool { return loginRE.MatchString(s) }

// SplitRepository splits "owner/name" and validates both halves.
func SplitRepository(s string) (owner, name string, ok bool) {
	o, n, found := strings.Cut(s, "/")
	if !found || !loginRE.MatchString(o) || !nameRE.MatchString(n) || n == "." || n == ".." || strings.HasSuffix(strings.ToLower(n), ".git") {
		return "", "", false
	}
	return o, n, true
}

// ValidRefName reports whether s is a valid branch name by the rules of
// git check-ref-format (https://git-scm.com/docs/git-check-ref-format):
// no "..", no ASCII control characters, space, ~ ^ : ? * [ \, no "@{", not
// "@", no component starting with "." or ending with ".lock", no leading,
// trailing or doubled "/", no trailing ".". At most 255 bytes.
func ValidRefName(s string) bool {
	if s == "" || len(s) > 255 || s == "@" || !utf8.ValidString(s) {
		return false
	}
	if strings.Contains(s, "..") || strings.Contains(s, "@{") || strings.Contains(s, "//") ||
		strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, comp := range strings.Split(s, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// ValidWorkflowPath reports whether p is a workflow file GitHub loads.
func ValidWorkflowPath(p string) bool { return workflowPathRE.MatchString(p) }

// DecodeOptions configures Decode.
type DecodeOptions struct {
	// Organization, when set, is the owner the registry must name (the
	// lock repository's owner); compared exactly.
	Organization string
}

// wire is the document shape; pointer fields detect absent keys.
type wire struct {
	SchemaVersion      *int            `json:"schemaVersion"`
	Organization       *string         `json:"organization"`
	ApprovedLockShas   []string        `json:"approvedLockShas"`
	ApprovedReturnShas []string        `json:"approvedReturnShas"`
	Repositories       []wireRepo      `json:"repositories"`
	Exceptions         []wireException `json:"exceptions"`
}

type wireRepo struct {
	Repository            *string `json:"repository"`
	DefaultBranch         *string `json:"defaultBranch"`
	Fork                  *bool   `json:"fork"`
	AllowWorkflowDispatch *bool   `json:"allowWorkflowDispatch"`
}

type wireException struct {
	Repository     *string `json:"repository"`
	Path           *string `json:"path"`
	Classification *string `json:"classification"`
	Owner          *string `json:"owner"`
	ExpiresAt      *string `json:"expiresAt"`
}

// Decode parses and validates a registry document. See the package
// documentation for every rule; a refusal is an *Error.
func Decode(data []byte, opts DecodeOptions) (*Registry, error) {
	if len(data) == 0 || len(data) > MaxBytes {
		return nil, fail(CodeSize, "the registry must hold 1 to %d bytes, got %d", MaxBytes, len(data))
	}
	if !utf8.Valid(data) {
		return nil, fail(CodeSyntax, "the registry is not valid UTF-8")
	}
	if err := checkDuplicateKeys(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return nil, fail(CodeUnknownField, "%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, fail(CodeSyntax, "the registry is not one JSON object of the documented shape: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(CodeSyntax, "the registry holds more than one JSON value")
	}
	return validate(&w, opts)
}

// checkDuplicateKeys walks the token stream and refuses an object that
// repeats a key (encoding/json would silently keep the last one) and any
// top-level value that is not an object.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // next string token in an object is a key
	}
	var stack []*frame
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fail(CodeSyntax, "the registry is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return fail(CodeSyntax, "the registry must be a JSON object")
			}
			first = false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.object {
					top.expect = true
				}
				stack = append(stack, &frame{object: d == '{', keys: map[string]bool{}, expect: d == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
			}
			continue
		}
		if top != nil && top.object {
			if top.expect {
				k, _ := tok.(string)
				if top.keys[k] {
					return fail(CodeDuplicateKey, "key %q appears twice in one object", k)
				}
				top.keys[k] = true
				top.expect = false
			} else {
				top.expect = true
			}
		}
		if len(stack) == 0 {
			return fail(CodeSyntax, "the registry holds more than one JSON value")
		}
	}
}

func validate(w *wire, opts DecodeOptions) (*Registry, error) {
	if w.SchemaVersion == nil || *w.SchemaVersion != SchemaVersion {
		return nil, fail(CodeSchema, "schemaVersion must be %d", SchemaVersion)
	}
	if w.Organization == nil || !loginRE.MatchString(*w.Organization) {
		return nil, fail(CodeOrganization, "organization must be a GitHub login")
	}
	org := *w.Organization
	if opts.Organization != "" && org != opts.Organization {
		return nil, fail(CodeOrganization, "organization %q is not the lock repository's owner %q", org, opts.Organization)
	}
	reg := &Registry{SchemaVersion: SchemaVersion, Organization: org}
	lock, err := shaList("approvedLockShas", w.ApprovedLockShas)
	if err != nil {
		return nil, err
	}
	if len(lock) == 0 {
		return nil, fail(CodeApprovedSha, "approvedLockShas must name at least one lock commit")
	}
	ret, err := shaList("approvedReturnShas", w.ApprovedReturnShas)
	if err != nil {
		return nil, err
	}
	inLock := map[string]bool{}
	for _, s := range lock {
		inLock[s] = true
	}
	for _, s := range ret {
		if !inLock[s] {
			return nil, fail(CodeApprovedSha, "approvedReturnShas entry %s is not in approvedLockShas", s)
		}
	}
	reg.ApprovedLockShas, reg.ApprovedReturnShas = lock, ret

	if len(w.Repositories) == 0 || len(w.Repositories) > MaxRepositories {
		return nil, fail(CodeRepository, "repositories must list 1 to %d repositories, got %d", MaxRepositories, len(w.Repositories))
	}
	seen := map[string]bool{}
	registered := map[string]bool{}
	for i, r := range w.Repositories {
		if r.Repository == nil || r.DefaultBranch == nil || r.Fork == nil || r.AllowWorkflowDispatch == nil {
			return nil, fail(CodeRepository, "repositories[%d] must set repository, defaultBranch, fork and allowWorkflowDispatch", i)
		}
		o, _, ok := SplitRepository(*r.Repository)
		if !ok {
			return nil, fail(CodeRepository, "repositories[%d].repository %q is not owner/name (owner at most 39, name at most 100 characters)", i, *r.Repository)
		}
		if !strings.EqualFold(o, org) {
			return nil, fail(CodeRepository, "repositories[%d].repository %q belongs to another owner than %q", i, *r.Repository, org)
		}
		key := strings.ToLower(*r.Repository)
		if seen[key] {
			return nil, fail(CodeRepository, "repository %q is listed twice (names are compared case-insensitively)", *r.Repository)
		}
		seen[key] = true
		registered[*r.Repository] = true
		if !ValidRefName(*r.DefaultBranch) {
			return nil, fail(CodeRepository, "repositories[%d].defaultBranch is not a valid branch name", i)
		}
		reg.Repositories = append(reg.Repositories, Repository{Repository: *r.Repository, DefaultBranch: *r.DefaultBranch,
			Fork: *r.Fork, AllowWorkflowDispatch: *r.AllowWorkflowDispatch})
	}
	if len(w.Exceptions) > MaxExceptions {
		return nil, fail(CodeException, "exceptions must list at most %d entries", MaxExceptions)
	}
	pairs := map[string]bool{}
	for i, e := range w.Exceptions {
		if e.Repository == nil || e.Path == nil || e.Classification == nil || e.Owner == nil || e.ExpiresAt == nil {
			return nil, fail(CodeException, "exceptions[%d] must set repository, path, classification, owner and expiresAt", i)
		}
		if !registered[*e.Repository] {
			return nil, fail(CodeException, "exceptions[%d].repository %q is not a registered repository spelled as registered", i, *e.Repository)
		}
		if !ValidWorkflowPath(*e.Path) {
			return nil, fail(CodeException, "exceptions[%d].path must be a workflow file .github/workflows/<name>.yml or .yaml", i)
		}
		switch Classification(*e.Classification) {
		case Synthetic, Disabled:
		default:
			return nil, fail(CodeException, "exceptions[%d].classification must be synthetic or disabled (controlled-canary comes from a dispatch-only trigger; non-licensing-static is the default)", i)
		}
		if !loginRE.MatchString(*e.Owner) {
			return nil, fail(CodeException, "exceptions[%d].owner must be the reviewer's GitHub login", i)
		}
		if _, err := time.Parse(time.RFC3339, *e.ExpiresAt); err != nil {
			return nil, fail(CodeException, "exceptions[%d].expiresAt must be an RFC 3339 time", i)
		}
		key := *e.Repository + "\x00" + *e.Path
		if pairs[key] {
			return nil, fail(CodeException, "exception for %s %s is listed twice", *e.Repository, *e.Path)
		}
		pairs[key] = true
		reg.Exceptions = append(reg.Exceptions, Exception{Repository: *e.Repository, Path: *e.Path,
			Classification: Classification(*e.Classification), Owner: *e.Owner, ExpiresAt: *e.ExpiresAt})
	}
	reg.sort()
	return reg, nil
}

func shaList(field string, in []string) ([]string, error) {
	if len(in) > MaxApprovedShas {
		return nil, fail(CodeApprovedSha, "%s must list at most %d commits", field, MaxApprovedShas)
	}
	out := []string{}
	seen := map[string]bool{}
	for i, s := range in {
		if !shaRE.MatchString(s) {
			return nil, fail(CodeApprovedSha, "%s[%d] must be a 40-character lowercase hex commit", field, i)
		}
		k := strings.ToLower(strings.TrimSpace(s))
		if seen[k] {
			return nil, fail(CodeApprovedSha, "%s lists %s twice", field, s)
		}
		seen[k] = true
		out = append(out, s)
	}
	return out, nil
}

func (r *Registry) sort() {
	sort.SliceStable(r.Repositories, func(i, j int) bool {
		return strings.ToLower(r.Repositories[i].Repository) < strings.ToLower(r.Repositories[j].Repository)
	})
	sort.SliceStable(r.Exceptions, func(i, j int) bool {
		a, b := r.Exceptions[i], r.Exceptions[j]
		if a.Repository != b.Repository {
			return strings.ToLower(a.Repository) < strings.ToLower(b.Repository)
		}
		return a.Path < b.Path
	})
}

// Encode writes the canonical document: validated, sorted, two-space JSON
// with a trailing newline. A registry Decode would refuse is an error.
func Encode(r *Registry, opts DecodeOptions) ([]byte, error) {
	if r == nil {
		return nil, fail(CodeSyntax, "nil registry")
	}
	c := *r
	c.SchemaVersion = SchemaVersion
	c.Repositories = append([]Repository(nil), r.Repositories...)
	c.Exceptions = append([]Exception(nil), r.Exceptions...)
	if c.ApprovedReturnShas == nil {
		c.ApprovedReturnShas = []string{}
	}
	if c.Exceptions == nil {
		c.Exceptions = []Exception{}
	}
	c.sort()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, fail(CodeSyntax, "encode: %v", err)
	}
	if _, err := Decode(buf.Bytes(), opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Lookup returns the row of repo (compared case-insensitively).
func (r *Registry) Lookup(repo string) (Repository, bool) {
	for _, row := range r.Repositories {
		if strings.EqualFold(row.Repository, repo) {
			return row, true
		}
	}
	return Repository{}, false
}

// ExceptionsFor returns the exceptions of repo (compared case-insensitively).
func (r *Registry) ExceptionsFor(repo string) []Exception {
	var out []Exception
	for _, e := range r.Exceptions {
		if strings.EqualFold(e.Repository, repo) {
			out = append(out, e)
		}
	}
	return out
}

// Add returns a copy of r with row added; a repository already registered
// (case-insensitively) is an *Error. The copy is validated.
func (r *Registry) Add(row Repository, opts DecodeOptions) (*Registry, error) {
	if _, ok := r.Lookup(row.Repository); ok {
		return nil, fail(CodeRepository, "repository %q is already registered", row.Repository)
	}
	c := *r
	c.Repositories = append(append([]Repository(nil), r.Repositories...), row)
	data, err := Encode(&c, opts)
	if err != nil {
		return nil, err
	}
	return Decode(data, opts)
}
