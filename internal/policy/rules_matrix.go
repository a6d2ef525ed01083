package policy

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// ---- rule 6: one holder id per matrix leg ----

// maxMatrixLegs is GitHub's limit of jobs one matrix can generate; a
// larger expansion is refused by GitHub and cannot be reasoned about here.
const maxMatrixLegs = 256

// Details of HolderIDSuffixCollision.
const (
	suffixLegsCollide = "legs-collide"
	suffixAxisOmitted = "axis-omitted"
	suffixDynamic     = "dynamic-matrix"
	suffixUnevaluable = "unevaluable-suffix"
)

// matrixLeg is one job a matrix generates: the values it binds
// (matrix.<axis> and, for object values, matrix.<axis>.<key>) in GitHub's
// string rendering.
type matrixLeg map[string]string

// holderSuffixRules checks that every leg of a licensed matrix job acquires
// under its own holder id. Two legs with one holder id are one holder to
// the lock: the second is taken for the first's retry, and one seat is
// used by two jobs. Every axis must appear in the suffix (an axis left out
// collides as soon as it gets a second value, or an include adds a leg),
// the legs are enumerated as GitHub does (cross product, exclude, then
// include) and every rendered suffix must differ from the others, compared
// without case as the reference does. A matrix the audit cannot enumerate
// (an expression) or a suffix it cannot evaluate fails closed.
func (a *analysis) holderSuffixRules(l *job, acq *step) {
	m := rawPath(l.raw, "strategy", "matrix")
	if m == nil {
		return
	}
	line := acq.line()
	suffix := strings.TrimSpace(acq.with["holder-id-suffix"])
	if suffix == "" {
		suffix = "default"
	}
	legs, axes, ok := expandMatrix(m)
	if !ok {
		a.addDetail(HolderIDSuffixCollision, l.wf.path, l.id, line, suffixDynamic)
		return
	}
	parts, err := parseTemplate(suffix)
	if err != nil {
		a.addDetail(HolderIDSuffixCollision, l.wf.path, l.id, line, suffixUnevaluable)
		return
	}
	used := map[string]bool{}
	for _, p := range parts {
		if p.expr != nil {
			for _, r := range contextRefsOf(p.expr) {
				used[r] = true
			}
		}
	}
	for _, ax := range axes {
		if !usesAxis(used, ax) {
			a.addDetail(HolderIDSuffixCollision, l.wf.path, l.id, line, suffixAxisOmitted)
			return
		}
	}
	seen := map[string]bool{}
	for i, leg := range legs {
		s, ok := renderSuffix(parts, leg, i)
		if !ok {
			a.addDetail(HolderIDSuffixCollision, l.wf.path, l.id, line, suffixUnevaluable)
			return
		}
		k := strings.ToLower(s)
		if seen[k] {
			a.addDetail(HolderIDSuffixCollision, l.wf.path, l.id, line, suffixLegsCollide)
			return
		}
		seen[k] = true
	}
}

// usesAxis reports whether the suffix references matrix.<axis> (or one of
// its properties, or the whole matrix context).
func usesAxis(used map[string]bool, axis string) bool {
	for r := range used {
		if r == "matrix" || r == "matrix."+axis || strings.HasPrefix(r, "matrix."+axis+".") {
			return true
		}
	}
	return false
}

// renderSuffix renders a parsed suffix for one leg: matrix values as GitHub
// renders them, strategy.job-index as the leg's index, and any other
// context (github.*, the same for every leg of a run) as its canonical
// text. ok is false when an expression cannot be evaluated.
func renderSuffix(parts []part, leg matrixLeg, index int) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		vars := map[string]string{"strategy.job-index": strconv.Itoa(index)}
		for k, v := range leg {
			vars[k] = v
		}
		refs := contextRefsOf(p.expr)
		matrixRef := false
		for _, r := range refs {
			if r == "matrix" || strings.HasPrefix(r, "matrix.") || r == "strategy.job-index" {
				matrixRef = true
				if _, ok := vars[r]; !ok {
					return "", false
				}
			}
		}
		if !matrixRef {
			// The same value for every leg of one run.
			b.WriteString("${{" + render(p.expr) + "}}")
			continue
		}
		v, err := eval(p.expr, vars)
		if err != nil {
			return "", false
		}
		b.WriteString(v.String())
	}
	return b.String(), true
}

// expandMatrix enumerates the legs of a literal matrix as GitHub does: the
// cross product of the axes, minus every exclude entry that matches, then
// each include entry merged into every original combination it does not
// contradict (or added as a leg of its own when it fits none). axes are
// the matrix's own keys. ok is false for a matrix that is not a literal
// mapping (an expression), an axis or entry that is not a literal list or
// mapping, or more than maxMatrixLegs legs.
func expandMatrix(m *yaml.Node) (legs []matrixLeg, axes []string, ok bool) {
	if m.Kind != yaml.MappingNode {
		return nil, nil, false
	}
	var include, exclude *yaml.Node
	type axis struct {
		name   string
		values []matrixLeg
	}
	var ax []axis
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch k.Value {
		case "include":
			include = v
			continue
		case "exclude":
			exclude = v
			continue
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, nil, false
		}
		var vals []matrixLeg
		for _, c := range v.Content {
			bound, ok := bindValue("matrix."+strings.ToLower(k.Value), c)
			if !ok {
				return nil, nil, false
			}
			vals = append(vals, bound)
		}
		ax = append(ax, axis{strings.ToLower(k.Value), vals})
		axes = append(axes, strings.ToLower(k.Value))
	}
	if len(ax) > 0 {
		legs = []matrixLeg{{}}
		for _, a := range ax {
			if len(legs)*len(a.values) > maxMatrixLegs {
				return nil, nil, false
			}
			var next []matrixLeg
			for _, leg := range legs {
				for _, v := range a.values {
					next = append(next, merge(leg, v))
				}
			}
			legs = next
		}
	}
	if exclude != nil {
		entries, ok := legEntries(exclude)
		if !ok {
			return nil, nil, false
		}
		kept := legs[:0]
		for _, leg := range legs {
			drop := false
			for _, e := range entries {
				if legMatches(leg, e) {
					drop = true
					break
				}
			}
			if !drop {
				kept = append(kept, leg)
			}
		}
		legs = kept
	}
	if include != nil {
		entries, ok := legEntries(include)
		if !ok {
			return nil, nil, false
		}
		original := len(legs)
		for _, e := range entries {
			merged := false
			for i := 0; i < original; i++ {
				if fits(legs[i], e, axes) {
					legs[i] = merge(legs[i], e)
					merged = true
				}
			}
			if !merged {
				legs = append(legs, e)
			}
		}
	}
	if len(legs) > maxMatrixLegs {
		return nil, nil, false
	}
	return legs, axes, true
}

// legEntries reads an include or exclude list: a sequence of mappings of
// literal values.
func legEntries(n *yaml.Node) ([]matrixLeg, bool) {
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	var out []matrixLeg
	for _, c := range n.Content {
		if c.Kind != yaml.MappingNode {
			return nil, false
		}
		e := matrixLeg{}
		for i := 0; i+1 < len(c.Content); i += 2 {
			bound, ok := bindValue("matrix."+strings.ToLower(c.Content[i].Value), c.Content[i+1])
			if !ok {
				return nil, false
			}
			e = merge(e, bound)
		}
		out = append(out, e)
	}
	return out, true
}

// bindValue binds a matrix value under path: a scalar as GitHub renders it
// in a string, a mapping as its properties (path.<key>, recursively) plus
// a marker at path itself. Sequences and expressions are not enumerable.
func bindValue(path string, n *yaml.Node) (matrixLeg, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "${{") {
			return nil, false
		}
		return matrixLeg{path: scalarString(n)}, true
	case yaml.MappingNode:
		out := matrixLeg{path: "Object"}
		for i := 0; i+1 < len(n.Content); i += 2 {
			sub, ok := bindValue(path+"."+strings.ToLower(n.Content[i].Value), n.Content[i+1])
			if !ok {
				return nil, false
			}
			out = merge(out, sub)
		}
		return out, true
	}
	return nil, false
}

// scalarString is GitHub's string rendering of a YAML scalar matrix value:
// numbers as numbers (3.10 is 3.1, the well-known python-version: 3.10
// trap), booleans and null as words. Anything else keeps its text.
func scalarString(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!int":
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return strconv.FormatInt(v, 10)
		}
	case "!!float":
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	case "!!bool":
		return strings.ToLower(n.Value)
	case "!!null":
		return ""
	}
	return n.Value
}

func merge(a, b matrixLeg) matrixLeg {
	out := matrixLeg{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// legMatches reports whether every binding of e is in leg (an exclude entry
// matches a leg by the keys it lists).
func legMatches(leg, e matrixLeg) bool {
	for k, v := range e {
		if got, ok := leg[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// fits reports whether include entry e can be merged into leg: it changes
// no value of an original axis.
func fits(leg, e matrixLeg, axes []string) bool {
	for k, v := range e {
		for _, ax := range axes {
			if k == "matrix."+ax || strings.HasPrefix(k, "matrix."+ax+".") {
				if got, ok := leg[k]; ok && got != v {
					return false
				}
			}
		}
	}
	return true
}
