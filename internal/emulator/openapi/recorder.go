package openapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
)

// RequiredFieldsPending are operations whose answers still lack required
// fields of GitHub's description that no client of this suite reads: a
// KindRequired violation on them is reported (Recorder.Pending) but does not
// fail the check. docs/emulator.md lists them; every operation the project
// reads from (runs, jobs, pulls, repositories, contents, commits,
// installations, runners) is absent from this list, so a missing required
// field there fails.
var RequiredFieldsPending = map[string]string{}

// Recorder checks every exchange that passes through it.
type Recorder struct {
	next http.RoundTripper
	desc *Description

	mu         sync.Mutex
	tolerated  []string
	exchanges  int
	operations map[string]int
	violations []Violation
	pending    []Violation
}

// NewRecorder wraps next; every exchange is checked against desc.
func NewRecorder(desc *Description, next http.RoundTripper) *Recorder {
	return &Recorder{next: next, desc: desc, operations: map[string]int{}}
}

// RoundTrip sends req through the wrapped transport and checks the exchange.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	body, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil
	}
	r.record(Exchange{Method: req.Method, URL: req.URL, ReqHeader: req.Header, ReqBody: reqBody,
		Status: resp.StatusCode, RespHeader: resp.Header, RespBody: body})
	return resp, nil
}

// skipPath reports the emulator's admin API, which is not GitHub's.
func skipPath(p string) bool { return strings.HasPrefix(p, "/_emulator") }

func (r *Recorder) record(ex Exchange) {
	if skipPath(ex.URL.Path) {
		return
	}
	vs := r.desc.Check(ex)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exchanges++
	r.operations[ex.Method+" "+apiPath(ex.URL.Path)]++
	for _, v := range vs {
		if r.toleratedLocked(v) {
			continue
		}
		if _, ok := RequiredFieldsPending[v.Operation]; ok && v.Kind == KindRequired {
			r.pending = append(r.pending, v)
			continue
		}
		r.violations = append(r.violations, v)
	}
}

// Tolerate accepts violations whose detail contains substring, for a test
// that makes the emulator answer outside GitHub's description on purpose
// (an unknown future enum value, say). reason documents why.
func (r *Recorder) Tolerate(substring, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reason != "" {
		r.tolerated = append(r.tolerated, substring)
	}
}

func (r *Recorder) toleratedLocked(v Violation) bool {
	for _, s := range r.tolerated {
		if strings.Contains(v.Detail, s) {
			return true
		}
	}
	return false
}

// Exchanges is how many exchanges were checked.
func (r *Recorder) Exchanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exchanges
}

// Violations are the failing violations, in order.
func (r *Recorder) Violations() []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Violation(nil), r.violations...)
}

// Pending are the reported, not failing, required-field violations.
func (r *Recorder) Pending() []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Violation(nil), r.pending...)
}

// Summary groups violations by operation, kind and detail with counts.
func Summary(vs []Violation) []string {
	counts := map[string]int{}
	for _, v := range vs {
		counts[v.String()]++
	}
	out := make([]string, 0, len(counts))
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%dx %s", n, k))
	}
	sort.Strings(out)
	return out
}

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Attach wraps next in a Recorder for the test's lifetime: when the test
// ends, every failing violation is reported with t.Errorf. It fails the
// test at once when the description cannot be loaded.
func Attach(t TB, next http.RoundTripper) *Recorder {
	t.Helper()
	desc, err := Load()
	if err != nil {
		t.Fatalf("%v", err)
	}
	rec := NewRecorder(desc, next)
	t.Cleanup(func() {
		if vs := rec.Violations(); len(vs) > 0 {
			t.Errorf("%d exchanges violate GitHub's API description (internal/emulator/openapi):\n%s", len(vs), strings.Join(Summary(vs), "\n"))
		}
	})
	return rec
}

// Middleware checks every exchange a handler serves (a proxy in front of
// the standalone emulator, for the end-to-end test).
func Middleware(rec *Recorder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var reqBody []byte
		if req.Body != nil {
			reqBody, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(reqBody))
		}
		cw := httptest.NewRecorder()
		next.ServeHTTP(cw, req)
		res := cw.Result()
		body := cw.Body.Bytes()
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(body)
		u := *req.URL
		rec.record(Exchange{Method: req.Method, URL: &u, ReqHeader: req.Header, ReqBody: reqBody, Status: res.StatusCode, RespHeader: res.Header, RespBody: body})
	})
}

// AttachHandler is Attach for a handler: every exchange next serves is
// checked, and the test fails on a violation when it ends.
func AttachHandler(t TB, next http.Handler) (http.Handler, *Recorder) {
	t.Helper()
	desc, err := Load()
	if err != nil {
		t.Fatalf("%v", err)
	}
	rec := NewRecorder(desc, nil)
	t.Cleanup(func() {
		if vs := rec.Violations(); len(vs) > 0 {
			t.Errorf("%d exchanges violate GitHub's API description (internal/emulator/openapi):\n%s", len(vs), strings.Join(Summary(vs), "\n"))
		}
	})
	return Middleware(rec, next), rec
}
