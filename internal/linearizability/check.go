package linearizability

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Default bounds of one check.
const (
	// DefaultTimeout is porcupine's wall-clock timeout. Inside a
	// testing/synctest bubble time.After is virtual and does not advance
	// while the checker computes, so there MaxSteps is the bound that acts.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxSteps bounds the model steps porcupine may try: a
	// deterministic budget, so a history's verdict never depends on the
	// machine's load. Compare-and-swap pins the order of the writes, so a
	// linearizable history of a simulation seed needs a few steps per
	// operation; the budget is for pathological searches.
	DefaultMaxSteps = 20_000_000
)

// Options bound a check and say where its visualization goes.
type Options struct {
	// Timeout is porcupine's timeout (DefaultTimeout when zero; negative:
	// none).
	Timeout time.Duration
	// MaxSteps is the model-step budget (DefaultMaxSteps when zero;
	// negative: none).
	MaxSteps int64
	// VisualizeDir, when set, is called only for a history that is not
	// linearizable and returns the directory that receives porcupine's HTML
	// visualization (the path is in Result), such as testing.TB.ArtifactDir.
	VisualizeDir func() string
	// Name names the visualization file (sanitized); "history" when empty.
	Name string
}

// Result is the verdict on one history.
type Result struct {
	// Verdict is porcupine's: Ok, Illegal, or Unknown (a bound was hit).
	Verdict porcupine.CheckResult
	// Operations counts the checked operations: Writes (of which Unknown
	// had no answer, Refused were refused for their sha and NotApplied
	// were refused for another reason: an overlapping commit to the branch
	// or a branch rule), Claims and Reads.
	Operations, Writes, UnknownWrites, RefusedWrites, NotAppliedWrites, Claims, Reads int
	// Partitions is the number of state files checked (porcupine checks
	// each on its own).
	Partitions int
	// Steps is the number of model steps porcupine took.
	Steps int64
	// Violations explains an Illegal or Unknown verdict: the first entry
	// carries CodeNotLinearizable or CodeCheckTimeout, the rest the rules
	// broken by writes that landed and the claims no version satisfies.
	Violations []Violation
	// Visualization is the HTML file written for an Illegal verdict ("" if
	// none was written).
	Visualization string
}

// OK reports whether the history is linearizable.
func (r Result) OK() bool { return r.Verdict == porcupine.Ok }

// Summary is a one-line account of the check.
func (r Result) Summary() string {
	return fmt.Sprintf("linearizability %s: %d operations (%d writes: %d unknown, %d refused, %d not applied; %d claims; %d reads) in %d partition(s), %d model steps",
		r.Verdict, r.Operations, r.Writes, r.UnknownWrites, r.RefusedWrites, r.NotAppliedWrites, r.Claims, r.Reads, r.Partitions, r.Steps)
}

// Check checks the history recorded so far: writes still in flight are
// taken as unknown. It may be called more than once.
func (r *Recorder) Check(opts Options) Result {
	ops, files, _ := r.snapshot()
	return check(ops, files, opts)
}

func check(ops []*op, files map[string]*tracked, opts Options) Result {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	m := &model{files: files, maxSteps: max(opts.MaxSteps, 0)}
	m.prepare(ops)
	res := Result{Operations: len(ops)}
	keys := map[string]bool{}
	history := make([]porcupine.Operation, 0, len(ops))
	for _, o := range ops {
		keys[o.key] = true
		ret := o.ret
		var out any
		switch o.kind {
		case opWrite:
			res.Writes++
			out = o.outcome
			switch o.outcome {
			case Unknown:
				res.UnknownWrites++
				ret = math.MaxInt64 // may apply at any time after its invocation, or never
			case Refused:
				res.RefusedWrites++
			case NotApplied:
				res.NotAppliedWrites++
			}
		case opClaim:
			res.Claims++
		case opRead:
			res.Reads++
		}
		history = append(history, porcupine.Operation{ClientId: o.client, Input: o, Call: o.call, Output: out, Return: ret})
	}
	res.Partitions = len(keys)
	timeout := max(opts.Timeout, 0)
	pm := m.porcupine()
	res.Verdict = porcupine.CheckOperationsTimeout(pm, history, timeout)
	res.Steps = m.steps.Load()
	if m.exceeded.Load() {
		res.Verdict = porcupine.Unknown
	}
	switch res.Verdict {
	case porcupine.Ok:
		return res
	case porcupine.Unknown:
		res.Violations = append(res.Violations, Violation{Code: CodeCheckTimeout, Detail: fmt.Sprintf(
			"the check stopped at its bound (%d model steps, timeout %s) before deciding; nothing was proven either way", opts.MaxSteps, opts.Timeout)})
		return res
	}
	res.Violations = append(res.Violations, Violation{Code: CodeNotLinearizable, Detail: fmt.Sprintf(
		"no order of the %d operations respects real time and the semaphore's sequential model", len(ops))})
	res.Violations = append(res.Violations, explain(m, ops)...)
	if opts.VisualizeDir != nil {
		vm := &model{files: files, docs: m.docs, docErr: m.docErr}
		_, info := porcupine.CheckOperationsVerbose(vm.porcupine(), history, timeout)
		path, err := writeVisualization(vm.porcupine(), info, opts.VisualizeDir(), opts.Name)
		if err != nil {
			res.Violations = append(res.Violations, Violation{Code: CodeNotLinearizable, Detail: "the visualization could not be written: " + esc(err.Error())})
		}
		res.Visualization = path
	}
	return res
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

func writeVisualization(pm porcupine.Model, info porcupine.LinearizationInfo, dir, name string) (string, error) {
	name = unsafeName.ReplaceAllString(name, "_")
	if name == "" {
		name = "history"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "linearizability-"+name+".html")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := porcupine.Visualize(pm, info, f); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

// explain names what makes a history fail, as far as it can be told
// without the search: every write that landed (its content was the base of
// an applied write, was applied, or is what the last read saw) although it
// breaks a rule of the model, and every claim that no landed version makes
// true.
func explain(m *model, ops []*op) []Violation {
	var out []Violation
	landed := map[string]map[string]bool{} // key -> sha
	mark := func(key, sha string) {
		if landed[key] == nil {
			landed[key] = map[string]bool{}
		}
		landed[key][sha] = true
	}
	for k, f := range m.files {
		if f.present {
			mark(k, shaOf(f.initial))
		}
	}
	for _, o := range ops {
		switch {
		case o.kind == opWrite && o.outcome == Applied:
			mark(o.key, o.sha)
			if o.base != "" {
				mark(o.key, o.base)
			}
		case o.kind == opRead && o.readPresent:
			mark(o.key, o.readSHA)
		}
	}
	for _, o := range ops {
		if o.kind != opWrite || o.outcome == Refused || o.outcome == NotApplied || !landed[o.key][o.sha] {
			continue
		}
		v := version{present: true, sha: o.base}
		if _, known := m.docs[o.base]; !known || o.base == "" {
			if f := m.files[o.key]; f != nil && f.present {
				continue // its base is no version this history knows
			}
			v = version{}
		}
		for _, viol := range m.verdict(o, v) {
			out = append(out, Violation{Code: viol.Code, Detail: fmt.Sprintf("write %q by %s (%s -> %s): %s",
				esc(o.message), esc(o.actor.String()), short(v.sha), short(o.sha), viol.Detail)})
		}
	}
	for _, o := range ops {
		if o.kind != opClaim || m.rules(o.key) == nil {
			continue
		}
		var why []string
		ok := false
		shas := make([]string, 0, len(landed[o.key]))
		for sha := range landed[o.key] {
			shas = append(shas, sha)
		}
		sort.Strings(shas)
		for _, sha := range shas {
			doc := m.docs[sha]
			if doc == nil {
				continue
			}
			w := m.rules(o.key).ClaimHolds(o.claim, doc, sha)
			if w == "" {
				ok = true
				break
			}
			why = append(why, w)
		}
		if !ok {
			code := map[ClaimKind]string{ClaimAcquired: CodeClaimAcquired, ClaimReleased: CodeClaimReleased, ClaimRecovered: CodeClaimRecovered}[o.claim.Kind]
			out = append(out, Violation{Code: code, Detail: fmt.Sprintf("%s: no committed version makes it true (%s)",
				esc(describeOp(o, nil)), strings.Join(dedupe(why), "; "))})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Code < out[b].Code })
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return out
}
