package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// Expressions are parsed with actionlint's lexer and parser, so the rules
// compare syntax trees, never text: `always()` written as `${{ always() }}`
// or with other spacing is the same node, and a string that merely looks
// like an expression is not one.

// part is one piece of a template string: literal text or one ${{ }}.
type part struct {
	lit  string
	expr actionlint.ExprNode
}

var errUnterminated = errors.New("unterminated ${{ expression")

// parseTemplate splits s into literal text and parsed ${{ }} expressions.
func parseTemplate(s string) ([]part, error) {
	var out []part
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			if s != "" {
				out = append(out, part{lit: s})
			}
			return out, nil
		}
		if i > 0 {
			out = append(out, part{lit: s[:i]})
		}
		rest := s[i+3:]
		if !strings.Contains(rest, "}}") {
			return nil, errUnterminated
		}
		l := actionlint.NewExprLexer(rest)
		node, err := actionlint.NewExprParser().Parse(l)
		if err != nil {
			return nil, fmt.Errorf("expression: %s", err.Message)
		}
		out = append(out, part{expr: node})
		off := l.Offset()
		if off <= 0 || off > len(rest) {
			return nil, errUnterminated
		}
		s = rest[off:]
	}
}

// singleExpr returns the expression when s is exactly one ${{ }} (with
// surrounding whitespace allowed), else nil.
func singleExpr(s string) actionlint.ExprNode {
	ps, err := parseTemplate(strings.TrimSpace(s))
	if err != nil || len(ps) != 1 || ps[0].expr == nil {
		return nil
	}
	return ps[0].expr
}

// condition parses an if: value. GitHub evaluates a bare if: as an
// expression and a value that is exactly one ${{ }} as that expression;
// any other value containing ${{ is a string template, which is always
// truthy, so it never counts as a guard (ok false).
func condition(s string) (actionlint.ExprNode, bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, false
	}
	if strings.Contains(t, "${{") {
		e := singleExpr(t)
		return e, e != nil
	}
	node, err := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(t + "}}"))
	if err != nil {
		return nil, false
	}
	return node, true
}

// render is the canonical text of an expression: identifiers lowercased
// (contexts are case-insensitive), index access by a string literal
// written as a property, binary operations parenthesized.
func render(n actionlint.ExprNode) string {
	switch n := n.(type) {
	case nil:
		return ""
	case *actionlint.VariableNode:
		return n.Name
	case *actionlint.ObjectDerefNode:
		return render(n.Receiver) + "." + n.Property
	case actionlint.ObjectDerefNode:
		return render(n.Receiver) + "." + n.Property
	case *actionlint.ArrayDerefNode:
		return render(n.Receiver) + ".*"
	case actionlint.ArrayDerefNode:
		return render(n.Receiver) + ".*"
	case *actionlint.IndexAccessNode:
		if s, ok := n.Index.(*actionlint.StringNode); ok {
			return render(n.Operand) + "." + strings.ToLower(s.Value)
		}
		return render(n.Operand) + "[" + render(n.Index) + "]"
	case *actionlint.NullNode:
		return "null"
	case *actionlint.BoolNode:
		return strconv.FormatBool(n.Value)
	case *actionlint.IntNode:
		return strconv.Itoa(n.Value)
	case *actionlint.FloatNode:
		return strconv.FormatFloat(n.Value, 'g', -1, 64)
	case *actionlint.StringNode:
		return "'" + strings.ReplaceAll(n.Value, "'", "''") + "'"
	case *actionlint.NotOpNode:
		return "!" + render(n.Operand)
	case *actionlint.CompareOpNode:
		return "(" + render(n.Left) + " " + n.Kind.String() + " " + render(n.Right) + ")"
	case *actionlint.LogicalOpNode:
		return "(" + render(n.Left) + " " + n.Kind.String() + " " + render(n.Right) + ")"
	case *actionlint.FuncCallNode:
		args := make([]string, len(n.Args))
		for i, a := range n.Args {
			args[i] = render(a)
		}
		return strings.ToLower(n.Callee) + "(" + strings.Join(args, ", ") + ")"
	default:
		return fmt.Sprintf("<%T>", n)
	}
}

// conjuncts flattens a top-level && chain.
func conjuncts(n actionlint.ExprNode) []actionlint.ExprNode {
	if l, ok := n.(*actionlint.LogicalOpNode); ok && l.Kind == actionlint.LogicalOpNodeKindAnd {
		return append(conjuncts(l.Left), conjuncts(l.Right)...)
	}
	return []actionlint.ExprNode{n}
}

// isAlways reports whether n is the call always().
func isAlways(n actionlint.ExprNode) bool {
	f, ok := n.(*actionlint.FuncCallNode)
	return ok && strings.EqualFold(f.Callee, "always") && len(f.Args) == 0
}

// isPath reports whether n is the context path p (lowercase, dotted).
func isPath(n actionlint.ExprNode, p string) bool {
	switch n.(type) {
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode, actionlint.ObjectDerefNode, *actionlint.IndexAccessNode:
		return render(n) == p
	}
	return false
}

// isStringLit reports whether n is the string literal v (GitHub compares
// strings case-insensitively).
func isStringLit(n actionlint.ExprNode, v string) bool {
	s, ok := n.(*actionlint.StringNode)
	return ok && strings.EqualFold(s.Value, v)
}

// isEquals reports whether n is `path == 'lit'` in either order.
func isEquals(n actionlint.ExprNode, path, lit string) bool {
	c, ok := n.(*actionlint.CompareOpNode)
	if !ok || c.Kind != actionlint.CompareOpNodeKindEq {
		return false
	}
	return (isPath(c.Left, path) && isStringLit(c.Right, lit)) || (isPath(c.Right, path) && isStringLit(c.Left, lit))
}

// isNotEquals reports whether n is `path != 'lit'` in either order.
func isNotEquals(n actionlint.ExprNode, path, lit string) bool {
	c, ok := n.(*actionlint.CompareOpNode)
	if !ok || c.Kind != actionlint.CompareOpNodeKindNotEq {
		return false
	}
	return (isPath(c.Left, path) && isStringLit(c.Right, lit)) || (isPath(c.Right, path) && isStringLit(c.Left, lit))
}

// exprIsPath reports whether s is exactly ${{ <path> }}.
func exprIsPath(s, path string) bool {
	e := singleExpr(s)
	return e != nil && isPath(e, path)
}

// walkExprs calls fn for every node of every expression in s (a template
// that fails to parse calls nothing and returns false).
func walkExprs(s string, fn func(actionlint.ExprNode)) bool {
	ps, err := parseTemplate(s)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.expr != nil {
			actionlint.VisitExprNode(p.expr, func(n, _ actionlint.ExprNode, entering bool) {
				if entering {
					fn(n)
				}
			})
		}
	}
	return true
}

// contextRefs returns the canonical context paths referenced in s (every
// maximal property chain, e.g. "secrets.unity_email", "github.token").
func contextRefs(s string) []string {
	var out []string
	walkExprs(s, func(n actionlint.ExprNode) {
		switch n.(type) {
		case *actionlint.VariableNode, *actionlint.ObjectDerefNode, actionlint.ObjectDerefNode, *actionlint.IndexAccessNode:
			out = append(out, render(n))
		}
	})
	return out
}

// contextRefsOf returns the canonical context paths one parsed expression
// references: each maximal property chain once ("matrix.os.name", not
// also "matrix.os" and "matrix").
func contextRefsOf(n actionlint.ExprNode) []string {
	var out []string
	actionlint.VisitExprNode(n, func(x, parent actionlint.ExprNode, entering bool) {
		if !entering {
			return
		}
		switch x.(type) {
		case *actionlint.VariableNode, *actionlint.ObjectDerefNode, actionlint.ObjectDerefNode, *actionlint.IndexAccessNode:
		default:
			return
		}
		switch p := parent.(type) {
		case *actionlint.ObjectDerefNode:
			if p.Receiver == x {
				return
			}
		case *actionlint.IndexAccessNode:
			if p.Operand == x {
				return
			}
		case *actionlint.ArrayDerefNode:
			if p.Receiver == x {
				return
			}
		}
		out = append(out, render(x))
	})
	return out
}

// value is an evaluated expression result (GitHub's loose typing).
type value struct {
	kind byte // 's' string, 'b' bool, 'n' number, 'z' null
	s    string
	b    bool
	n    float64
}

func (v value) truthy() bool {
	switch v.kind {
	case 's':
		return v.s != ""
	case 'b':
		return v.b
	case 'n':
		return v.n != 0 && v.n == v.n
	default:
		return false
	}
}

// String is GitHub's rendering of a value inside a string template.
func (v value) String() string {
	switch v.kind {
	case 's':
		return v.s
	case 'b':
		return strconv.FormatBool(v.b)
	case 'n':
		return strconv.FormatFloat(v.n, 'f', -1, 64)
	default:
		return ""
	}
}

func (v value) num() float64 {
	switch v.kind {
	case 's':
		if strings.TrimSpace(v.s) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
		if err != nil {
			return nanValue()
		}
		return f
	case 'b':
		if v.b {
			return 1
		}
		return 0
	case 'n':
		return v.n
	default:
		return 0
	}
}

func nanValue() float64 { z := 0.0; return z / z }

// looseEqual is GitHub's == : same kinds compare directly (strings
// case-insensitively); otherwise both are coerced to numbers.
func looseEqual(a, b value) bool {
	if a.kind == b.kind {
		switch a.kind {
		case 's':
			return strings.EqualFold(a.s, b.s)
		case 'b':
			return a.b == b.b
		case 'n':
			return a.n == b.n
		default:
			return true
		}
	}
	return a.num() == b.num()
}

var errNotEvaluable = errors.New("expression is not evaluable from the given values")

// eval evaluates the literal/comparison/logic subset of expressions with
// vars bound to strings ("matrix.test-mode" → "editmode"). Anything else
// (functions, unknown contexts) is errNotEvaluable.
func eval(n actionlint.ExprNode, vars map[string]string) (value, error) {
	switch n := n.(type) {
	case *actionlint.StringNode:
		return value{kind: 's', s: n.Value}, nil
	case *actionlint.BoolNode:
		return value{kind: 'b', b: n.Value}, nil
	case *actionlint.IntNode:
		return value{kind: 'n', n: float64(n.Value)}, nil
	case *actionlint.FloatNode:
		return value{kind: 'n', n: n.Value}, nil
	case *actionlint.NullNode:
		return value{kind: 'z'}, nil
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode, actionlint.ObjectDerefNode, *actionlint.IndexAccessNode:
		v, ok := vars[render(n)]
		if !ok {
			return value{}, errNotEvaluable
		}
		return value{kind: 's', s: v}, nil
	case *actionlint.NotOpNode:
		v, err := eval(n.Operand, vars)
		if err != nil {
			return value{}, err
		}
		return value{kind: 'b', b: !v.truthy()}, nil
	case *actionlint.LogicalOpNode:
		l, err := eval(n.Left, vars)
		if err != nil {
			return value{}, err
		}
		if (n.Kind == actionlint.LogicalOpNodeKindAnd) != l.truthy() {
			return l, nil
		}
		return eval(n.Right, vars)
	case *actionlint.CompareOpNode:
		l, err := eval(n.Left, vars)
		if err != nil {
			return value{}, err
		}
		r, err := eval(n.Right, vars)
		if err != nil {
			return value{}, err
		}
		switch n.Kind {
		case actionlint.CompareOpNodeKindEq:
			return value{kind: 'b', b: looseEqual(l, r)}, nil
		case actionlint.CompareOpNodeKindNotEq:
			return value{kind: 'b', b: !looseEqual(l, r)}, nil
		}
		return value{}, errNotEvaluable
	}
	return value{}, errNotEvaluable
}
