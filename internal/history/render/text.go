package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// sideWidth is the width of each column of the side-by-side versions.
const sideWidth = 64

// Text writes the verify report for a terminal or a job log: per lock the
// headline, the first violation with the two versions side by side, the
// other findings, the transitions verified and the notes.
func Text(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, l := range r.Locks {
		fmt.Fprintf(&b, "lock %s on %s@%s: %s\n", l.Lock, r.Repository, r.Branch, l.Headline())
		v := l.Verify
		if v == nil {
			continue
		}
		if f := v.FirstViolation; f != nil {
			fmt.Fprintf(&b, "\nFIRST VIOLATION  rule %s\n  commit  %s\n  time    %s\n  author  %s\n  message %s\n  detail  %s\n\n",
				f.Rule, f.Commit, f.Time.UTC().Format(time.RFC3339), f.Author, oneLine(f.Message), f.Detail)
			b.WriteString(sideBySide("before (parent version)", f.Before, "after (this commit)", f.After))
			b.WriteString("\n")
		}
		if len(v.Findings) > 1 || (len(v.Findings) == 1 && v.FirstViolation == nil) {
			b.WriteString("findings:\n")
			for i, f := range v.Findings {
				if i == maxListed {
					fmt.Fprintf(&b, "  ... and %d more\n", len(v.Findings)-maxListed)
					break
				}
				ack := ""
				if f.Acknowledged {
					ack = " (acknowledged)"
				}
				fmt.Fprintf(&b, "  %s  %-24s %s%s\n", short(f.Commit), f.Rule, f.Detail, ack)
			}
		}
		var parts []string
		for _, k := range sortedKeys(v.Transitions) {
			parts = append(parts, fmt.Sprintf("%s %d", k, v.Transitions[k]))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "transitions: %s\n", strings.Join(parts, ", "))
		}
		if l.Requests > 0 {
			fmt.Fprintf(&b, "requests: %d\n", l.Requests)
		}
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sideBySide lays two texts out in two columns of sideWidth runes (longer
// lines cut with "…"), aligned line by line on their longest common
// subsequence: equal lines side by side, a line only in the parent marked
// "<", a line only in this commit marked ">".
func sideBySide(lh, left, rh, right string) string {
	l, r := strings.Split(strings.TrimRight(left, "\n"), "\n"), strings.Split(strings.TrimRight(right, "\n"), "\n")
	if left == "" {
		l = []string{"(absent)"}
	}
	if right == "" {
		r = []string{"(absent)"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %s   %s\n", pad(lh), rh)
	fmt.Fprintf(&b, "  %s   %s\n", strings.Repeat("-", sideWidth), strings.Repeat("-", sideWidth))
	for _, p := range align(l, r) {
		mark := " "
		switch {
		case p.left == nil:
			mark = ">"
		case p.right == nil:
			mark = "<"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", pad(deref(p.left)), mark, cut(deref(p.right)))
	}
	return b.String()
}

type linePair struct{ left, right *string }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// maxAlign bounds the alignment table; larger texts pair by index.
const maxAlign = 4000

// align pairs the lines of a and b on a longest common subsequence.
func align(a, b []string) []linePair {
	var out []linePair
	if len(a) > maxAlign || len(b) > maxAlign {
		for i := range max(len(a), len(b)) {
			var p linePair
			if i < len(a) {
				p.left = &a[i]
			}
			if i < len(b) {
				p.right = &b[i]
			}
			if p.left != nil && p.right != nil && *p.left != *p.right {
				out = append(out, linePair{left: p.left}, linePair{right: p.right})
				continue
			}
			out = append(out, p)
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, linePair{left: &a[i], right: &b[j]})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, linePair{right: &b[j]})
			j++
		default:
			out = append(out, linePair{left: &a[i]})
			i++
		}
	}
	return out
}

func cut(s string) string {
	if utf8.RuneCountInString(s) <= sideWidth {
		return s
	}
	return string([]rune(s)[:sideWidth-1]) + "…"
}

func pad(s string) string {
	s = cut(s)
	return s + strings.Repeat(" ", sideWidth-utf8.RuneCountInString(s))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// JSON writes the report as one indented JSON document.
func JSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
