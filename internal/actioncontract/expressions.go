package actioncontract

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"
)

// GitHub evaluates `${{ }}` in action metadata wherever it appears, but only
// runs:, outputs.<id>.value and inputs.<id>.default have contexts to evaluate
// it in; anywhere else (a description, the name, branding, ...) the runner
// refuses the whole action at "Set up job" with e.g. "Unrecognized
// named-value: 'runner'" (GitHub's action schema, action-v1.0.json in
// @actions/workflow-parser, gives only those three places an expression
// context; tools/workflow-parser loads every action.yml with that parser).

// exprOpen is what starts an expression in action metadata.
const exprOpen = "${{"

// maxMetadataDepth bounds the walk (and alias chains) of one document.
const maxMetadataDepth = 64

// MisplacedExpression is one `${{` found in action metadata outside runs:,
// outputs.<id>.value and inputs.<id>.default.
type MisplacedExpression struct {
	// Path is the dotted key path to the scalar, e.g.
	// "inputs.runner-id.description"; a key that itself holds `${{` is
	// reported with its own path.
	Path string
	// Line and Column locate the scalar in the file (1-based).
	Line, Column int
}

func (m MisplacedExpression) String() string {
	return fmt.Sprintf("%s (line %d, column %d)", m.Path, m.Line, m.Column)
}

// MisplacedExpressions parses one action.yml and returns every `${{` that
// sits outside the three places GitHub evaluates expressions in action
// metadata (runs:, outputs.<id>.value, inputs.<id>.default), in document
// order. Keys are checked as well as values; aliases are followed to their
// anchors, so an anchored default reused in a description is reported. An
// error means the document is not a YAML mapping.
func MisplacedExpressions(src []byte) ([]MisplacedExpression, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("action metadata: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("action metadata: the document is not one YAML mapping")
	}
	w := walker{}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		w.scalar(key, key.Value)
		switch key.Value {
		case "runs":
			// Evaluated by the runner: steps' if/env/with, pre-if, post-if, args.
		case "inputs":
			w.members(val, key.Value, "default")
		case "outputs":
			w.members(val, key.Value, "value")
		default:
			w.node(val, key.Value, 0)
		}
	}
	return w.found, nil
}

type walker struct{ found []MisplacedExpression }

// members walks inputs: or outputs:, each member a mapping whose allowed key
// (default or value) may hold an expression.
func (w *walker) members(n *yaml.Node, path, allowed string) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		w.node(n, path, 0)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		id, member := n.Content[i], deref(n.Content[i+1])
		p := path + "." + id.Value
		w.scalar(id, p)
		if member.Kind != yaml.MappingNode {
			w.node(member, p, 1)
			continue
		}
		for j := 0; j+1 < len(member.Content); j += 2 {
			k, v := member.Content[j], member.Content[j+1]
			w.scalar(k, p+"."+k.Value)
			if k.Value != allowed {
				w.node(v, p+"."+k.Value, 2)
			}
		}
	}
}

// node reports every scalar (keys included) under n that holds `${{`.
func (w *walker) node(n *yaml.Node, path string, depth int) {
	if depth > maxMetadataDepth {
		return
	}
	switch n.Kind {
	case yaml.AliasNode:
		if t := deref(n); t.Kind == yaml.ScalarNode {
			w.scalar(n, path)
		} else if t.Kind != yaml.AliasNode {
			w.node(t, path, depth+1)
		}
	case yaml.ScalarNode:
		w.scalar(n, path)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			w.node(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w.scalar(k, path+"."+k.Value)
			w.node(v, path+"."+k.Value, depth+1)
		}
	}
}

// scalar reports n (or the scalar an alias n names) when it holds `${{`, at
// n's own position: for an alias, where the alias is used.
func (w *walker) scalar(n *yaml.Node, path string) {
	if t := deref(n); t.Kind == yaml.ScalarNode && strings.Contains(t.Value, exprOpen) {
		w.found = append(w.found, MisplacedExpression{Path: path, Line: n.Line, Column: n.Column})
	}
}

// deref follows an alias chain to its anchor (bounded).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxMetadataDepth; i++ {
		n = n.Alias
	}
	return n
}
