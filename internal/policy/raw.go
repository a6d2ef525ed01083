package policy

import (
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v4"
)

// The raw YAML tree (the same go.yaml.in/yaml/v4 actionlint parses with)
// answers what actionlint's AST deliberately normalizes away: whether a
// value was the plain YAML boolean false or a quoted "false", False or an
// expression, and whether an integer was written as one.

// rawRoot returns the top-level mapping of a document, or nil.
func rawRoot(src []byte) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil {
		return nil
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// rawGet returns the value of key in mapping n (exact key text), or nil.
func rawGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// rawKey returns the key node of key in mapping n, or nil.
func rawKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// rawPath follows keys through nested mappings.
func rawPath(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = rawGet(n, k)
	}
	return n
}

// rawIndex returns element i of sequence n, or nil.
func rawIndex(n *yaml.Node, i int) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
		return nil
	}
	return n.Content[i]
}

// isLiteralFalse reports whether n is the plain YAML boolean `false`
// (not quoted, not False, not an expression).
func isLiteralFalse(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" && n.Style == 0 && n.Value == "false"
}

var plainIntRE = regexp.MustCompile(`^[0-9]{1,6}$`)

// literalInt returns n's value when it is a plain decimal YAML integer.
func literalInt(n *yaml.Node) (int, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Style != 0 || !plainIntRE.MatchString(n.Value) {
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	return v, err == nil
}

// pos is a 1-based line/column.
type pos struct{ line, col int }

func nodePos(n *yaml.Node) pos {
	if n == nil {
		return pos{}
	}
	return pos{n.Line, n.Column}
}
