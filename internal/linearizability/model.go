package linearizability

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/anishathalye/porcupine"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// version is one possible content of the register: its blob SHA (the
// content's identity: equal SHAs are equal documents), or absent.
type version struct {
	present bool
	sha     string
}

// mstate is the model's state: the set of versions the file may be at (a
// write whose outcome is unknown may or may not have applied, so the set
// holds both until a later operation tells them apart). It is sorted and
// never modified after it is built. nil is the partition's initial state.
type mstate []version

// model is the sequential specification for one check.
type model struct {
	files map[string]*tracked
	// docs maps a blob SHA to its decoded document (every applied or
	// possibly applied write's content, and the initial ones).
	docs     map[string]*lockstate.State
	docErr   map[string]error
	steps    atomic.Int64
	maxSteps int64
	exceeded atomic.Bool
}

func (m *model) initial(key string) mstate {
	f := m.files[key]
	if f == nil || !f.present {
		return mstate{{}}
	}
	return mstate{{present: true, sha: shaOf(f.initial)}}
}

// doc returns the decoded document of v (nil for an absent file).
func (m *model) doc(key string, v version) (*lockstate.State, error) {
	if !v.present {
		return nil, nil
	}
	return m.docs[v.sha], m.docErr[v.sha]
}

func (m *model) rules(key string) *LockRules {
	if f := m.files[key]; f != nil {
		return f.rules
	}
	return nil
}

// decodeNext decodes a write's content once (prepare runs it before the
// check, so the check itself only reads).
func (m *model) decodeNext(o *op) (*lockstate.State, error) {
	if o.decoded {
		return o.next, o.nextErr
	}
	o.decoded = true
	if r := m.rules(o.key); r != nil {
		o.next, o.nextErr = decodeWith(r, o.content)
	}
	return o.next, o.nextErr
}

func decodeWith(r *LockRules, content []byte) (*lockstate.State, error) {
	return lockstate.Decode(content, lockstate.DecodeOptions{Lock: r.Lock, ServerURL: r.ServerURL})
}

// prepare decodes every document the check may reach: the initial ones
// and every write that applied or may have applied.
func (m *model) prepare(ops []*op) {
	m.docs, m.docErr = map[string]*lockstate.State{}, map[string]error{}
	for _, f := range m.files {
		if f.rules == nil || !f.present {
			continue
		}
		sha := shaOf(f.initial)
		m.docs[sha], m.docErr[sha] = decodeWith(f.rules, f.initial)
	}
	for _, o := range ops {
		if o.kind != opWrite || o.outcome == Refused || o.outcome == NotApplied {
			continue
		}
		next, err := m.decodeNext(o)
		if _, seen := m.docs[o.sha]; !seen {
			m.docs[o.sha], m.docErr[o.sha] = next, err
		}
	}
}

// verdict judges o applied to v (memoized per base).
func (m *model) verdict(o *op, v version) []Violation {
	k := "\x00absent"
	if v.present {
		k = v.sha
	}
	if vs, ok := o.verdicts[k]; ok {
		return vs
	}
	if o.verdicts == nil {
		o.verdicts = map[string][]Violation{}
	}
	vs := m.judgeWrite(o, v)
	o.verdicts[k] = vs
	return vs
}

func (m *model) judgeWrite(o *op, v version) []Violation {
	r := m.rules(o.key)
	if r == nil {
		return nil // a plain register: any content is a legal value
	}
	next, err := m.decodeNext(o)
	if err != nil {
		return []Violation{{Code: CodeUndecodable, Detail: esc(err.Error())}}
	}
	prev, err := m.doc(o.key, v)
	if err != nil {
		return []Violation{{Code: CodeUndecodable, Detail: "the version it replaced does not decode: " + esc(err.Error())}}
	}
	return r.Judge(Step{Prev: prev, Next: next, Actor: o.actor, At: o.at, Evidence: o.evidence})
}

// applies reports whether a write carrying base applies to v (GitHub's
// Contents API: an absent file is created whatever the sha; an existing
// one needs its exact blob SHA).
func applies(base string, v version) bool { return !v.present || v.sha == base }

func shaOf(content []byte) string { return store.BlobSHA(content) }

func (m *model) step(state, input, output any) (bool, any) {
	o := input.(*op)
	if m.maxSteps > 0 && m.steps.Add(1) > m.maxSteps {
		m.exceeded.Store(true)
		return false, nil
	}
	cur, _ := state.(mstate)
	if cur == nil {
		cur = m.initial(o.key)
	}
	var next mstate
	switch o.kind {
	case opWrite:
		switch output.(Outcome) {
		case Refused:
			for _, v := range cur {
				if !applies(o.base, v) {
					next = append(next, v)
				}
			}
		case NotApplied:
			next = append(next, cur...)
		case Applied:
			for _, v := range cur {
				if applies(o.base, v) && len(m.verdict(o, v)) == 0 {
					next = append(next, version{present: true, sha: o.sha})
				}
			}
		default:
			next = append(next, cur...)
			for _, v := range cur {
				if applies(o.base, v) && len(m.verdict(o, v)) == 0 {
					next = append(next, version{present: true, sha: o.sha})
				}
			}
		}
	case opClaim:
		for _, v := range cur {
			if m.claimHolds(o, v) {
				next = append(next, v)
			}
		}
	case opRead:
		for _, v := range cur {
			if v.present == o.readPresent && (!v.present || v.sha == o.readSHA) {
				next = append(next, v)
			}
		}
	}
	if len(next) == 0 {
		return false, nil
	}
	return true, normalize(next)
}

func normalize(s mstate) mstate {
	sort.Slice(s, func(a, b int) bool {
		if s[a].present != s[b].present {
			return !s[a].present
		}
		return s[a].sha < s[b].sha
	})
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

func (m *model) claimHolds(o *op, v version) bool {
	r := m.rules(o.key)
	if r == nil {
		return true
	}
	doc, err := m.doc(o.key, v)
	if err != nil {
		return false
	}
	if doc == nil {
		doc = lockstate.Empty(r.Lock)
	}
	return r.ClaimHolds(o.claim, doc, v.sha) == ""
}

func (m *model) equal(a, b any) bool {
	x, _ := a.(mstate)
	y, _ := b.(mstate)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func (m *model) hash(s any) uint64 {
	x, _ := s.(mstate)
	h := fnv.New64a()
	for _, v := range x {
		if v.present {
			_, _ = h.Write([]byte(v.sha))
		}
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

func (m *model) porcupine() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByKey,
		Init:      func() any { return mstate(nil) },
		Step:      m.step,
		Equal:     m.equal,
		Hash:      m.hash,
		DescribeOperation: func(input, output any) string {
			return describeOp(input.(*op), output)
		},
		DescribeState: func(state any) string { return m.describeState(state) },
	}
}

// partitionByKey: the history of each state file is checked on its own
// (per lock): a write to one file never changes another.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, h := range history {
		k := h.Input.(*op).key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], h)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

func describeOp(o *op, output any) string {
	switch o.kind {
	case opWrite:
		base := "none"
		if o.base != "" {
			base = short(o.base)
		}
		return fmt.Sprintf("PUT %q by %s: %s -> %s (%s)", o.message, o.actor, base, short(o.sha), output)
	case opClaim:
		switch o.claim.Kind {
		case ClaimAcquired:
			return fmt.Sprintf("%s reported acquired=true fencing-token=%q state-sha=%s", o.actor, o.claim.Token, short(o.claim.StateSHA))
		case ClaimReleased:
			return fmt.Sprintf("%s reported its entries released", o.actor)
		}
		return fmt.Sprintf("%s reported %s recovered", o.actor, o.actor.Target)
	}
	if !o.readPresent {
		return "read: absent"
	}
	return "read: " + short(o.readSHA)
}

func (m *model) describeState(state any) string {
	s, _ := state.(mstate)
	if s == nil {
		return "initial"
	}
	var parts []string
	for _, v := range s {
		if !v.present {
			parts = append(parts, "absent")
			continue
		}
		d := m.docs[v.sha]
		if d == nil {
			parts = append(parts, short(v.sha))
			continue
		}
		parts = append(parts, short(v.sha)+" "+summarize(d))
	}
	return strings.Join(parts, " | ")
}

// summarize is a one-line view of a document for the visualization.
func summarize(d *lockstate.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema %d; holders [", d.SchemaVersion)
	for i, h := range d.Holders {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(h.HolderID + "@" + h.RunAttempt + " on " + h.RunnerID)
		if h.FencingToken > 0 {
			b.WriteString(" #" + strconv.FormatInt(h.FencingToken, 10))
		}
	}
	b.WriteString("]; queue [")
	for i, e := range d.Queue {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.HolderID + "@" + e.RunAttempt)
	}
	fmt.Fprintf(&b, "]; %d reservations", len(d.Reservations))
	if d.ActiveIncident != nil {
		b.WriteString("; incident " + d.ActiveIncident.IncidentID)
	}
	if d.SchemaVersion >= lockstate.FencedSchemaVersion {
		fmt.Fprintf(&b, "; counter %d", d.FencingToken)
	}
	return esc(b.String())
}
