package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
)

var (
	once   sync.Once
	shared *render.Report
)

// report is a real report: a generated history read back through the
// emulator, verified, with statistics and the what-if replay, plus a
// second lock with a planted violation (a version the intruder wrote).
func report(t *testing.T) *render.Report {
	t.Helper()
	once.Do(func() {
		w, err := histgen.New(histgen.Options{Seed: 31, Jobs: 80, UnsafeEvery: 6, DeadEvery: 15, GiveUpAfter: 40 * time.Minute, CooldownSeconds: 30})
		require.NoError(t, err)
		_, err = w.Run(context.Background())
		require.NoError(t, err)
		c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.github.com/", Token: w.ReaderToken(), Transport: w.Emulator.Transport(), Clock: w.Clock})
		require.NoError(t, err)
		l, err := ghsource.Load(context.Background(), ghsource.Options{Client: c, Owner: histgen.Owner, Repo: histgen.Repo, Lock: histgen.Lock}, nil)
		require.NoError(t, err)
		in := l.Input
		in.ServerURL, in.Writers, in.Operators = histgen.ServerURL, []string{histgen.WriterLogin}, []string{histgen.OperatorLogin}
		res := history.Verify(in)
		require.True(t, res.OK(), "%+v", res.FirstViolation)
		st := history.Compute(histgen.Lock, res.Base, res.Steps, history.Window{})
		bad := *res
		bad.Lock = "seats-<b>&\"x\""
		bad.Status = history.StatusViolations
		f := history.Finding{Rule: history.RuleForeignAuthor, Commit: strings.Repeat("ab", 20), Time: w.Clock.Now(), Author: "mallory",
			Detail: "the commit is authored by mallory <script>alert(1)</script>", Before: "{\n  \"a\": 1\n}\n", After: "{\n  \"a\": 2,\n  \"b\": \"" + strings.Repeat("y", 90) + "\"\n}\n"}
		bad.Findings = []history.Finding{f, f}
		bad.FirstViolation = &f
		shared = &render.Report{Repository: histgen.Owner + "/" + histgen.Repo, Branch: histgen.Branch, GeneratedAt: w.Clock.Now(),
			Locks: []render.LockReport{
				{Lock: histgen.Lock, Verify: res, Stats: st, WhatIf: history.RunWhatIf(st), Requests: l.Counts.Total()},
				{Lock: bad.Lock, Verify: &bad},
			}}
	})
	require.NotNil(t, shared)
	return shared
}

// TestHTMLIsWellFormedAndSelfContained parses the page with a strict XML
// parser, refuses every element and attribute that could load something
// (script, link, img, iframe, object, embed, src, href, srcset,
// xlink:href, CSS url() and @import), and checks the charts structurally:
// exactly one SVG per metric, each with a title, a labelled x axis and a
// labelled y axis, and data drawn.
func TestHTMLIsWellFormedAndSelfContained(t *testing.T) {
	t.Parallel()
	r := report(t)
	var buf bytes.Buffer
	require.NoError(t, render.HTML(&buf, r))
	page := buf.String()
	assert.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))

	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	type svgInfo struct {
		metric                string
		title, xLabel, yLabel string
		data                  int
	}
	var svgs []*svgInfo
	var cur *svgInfo
	var text *string
	depth := 0
	forbidden := map[string]bool{"script": true, "link": true, "img": true, "iframe": true, "object": true, "embed": true, "image": true, "use": true, "foreignObject": true, "audio": true, "video": true, "source": true, "base": true}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the page must be well-formed XML")
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			assert.False(t, forbidden[el.Name.Local], "element <%s> may load an external resource", el.Name.Local)
			for _, a := range el.Attr {
				assert.NotContains(t, []string{"src", "href", "srcset", "background", "poster", "action", "formaction"}, a.Name.Local, "attribute %s on <%s>", a.Name.Local, el.Name.Local)
				assert.NotContains(t, strings.ToLower(a.Value), "url(", "attribute %s", a.Name.Local)
				assert.False(t, strings.HasPrefix(strings.ToLower(a.Name.Local), "on"), "event handler %s", a.Name.Local)
			}
			switch {
			case el.Name.Local == "svg":
				cur = &svgInfo{metric: attr(el, "data-metric")}
				svgs = append(svgs, cur)
			case cur != nil && el.Name.Local == "title" && cur.title == "":
				text = &cur.title
			case cur != nil && el.Name.Local == "text" && attr(el, "class") == "x-label":
				text = &cur.xLabel
			case cur != nil && el.Name.Local == "text" && attr(el, "class") == "y-label":
				text = &cur.yLabel
			case cur != nil && (el.Name.Local == "polyline" || (el.Name.Local == "rect" && attr(el, "class") == "bar")):
				cur.data++
			}
		case xml.CharData:
			if text != nil {
				*text += string(el)
			}
			if bytes.Contains(bytes.ToLower(el), []byte("@import")) || bytes.Contains(bytes.ToLower(el), []byte("url(")) {
				t.Errorf("CSS must not import or load: %q", el)
			}
		case xml.EndElement:
			depth--
			text = nil
			if el.Name.Local == "svg" {
				cur = nil
			}
		}
	}
	assert.Zero(t, depth)
	var metrics []string
	for _, s := range svgs {
		metrics = append(metrics, s.metric)
		assert.NotEmpty(t, strings.TrimSpace(s.title), s.metric)
		assert.NotEmpty(t, strings.TrimSpace(s.xLabel), "%s: x axis label", s.metric)
		assert.NotEmpty(t, strings.TrimSpace(s.yLabel), "%s: y axis label", s.metric)
		assert.Positive(t, s.data, "%s: nothing drawn", s.metric)
	}
	assert.Equal(t, render.Metrics, metrics, "one SVG per metric, for the lock with statistics")
	assert.NotContains(t, page, "<script>alert", "text is escaped")
	assert.Contains(t, page, "&lt;script&gt;")
	assert.Contains(t, page, "seats-&lt;b&gt;&amp;")
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestMarkdownHasOneMermaidChartPerMetric(t *testing.T) {
	t.Parallel()
	r := report(t)
	var buf bytes.Buffer
	require.NoError(t, render.Markdown(&buf, r))
	md := buf.String()
	blocks := regexp.MustCompile("(?s)```mermaid\n(.*?)```").FindAllStringSubmatch(md, -1)
	require.Len(t, blocks, len(render.Metrics))
	for _, b := range blocks {
		body := b[1]
		assert.True(t, strings.HasPrefix(body, "xychart-beta\n"), body)
		assert.Regexp(t, `(?m)^  x-axis "[^"]+" \[`, body)
		assert.Regexp(t, `(?m)^  y-axis "[^"]+" 0 --> [0-9.]+$`, body)
		assert.Regexp(t, `(?m)^  (bar|line) \[[0-9., ]+\]$`, body)
		xs := regexp.MustCompile(`x-axis "[^"]+" \[(.*)\]`).FindStringSubmatch(body)[1]
		assert.LessOrEqual(t, len(strings.Split(xs, ", ")), 48)
	}
	assert.Contains(t, md, r.Locks[0].Headline())
	assert.Contains(t, md, "First violation: **foreign-author**")
	assert.NotContains(t, md, "<script>")
	assert.Contains(t, md, "| 2 (observed) |")
}

// TestOpenMetricsGrammar checks the exposition line by line: metric
// families announced by # TYPE and # HELP, every sample of a family
// together and named after it, valid names and escaped label values,
// summaries with quantile, _count and _sum samples, and the final # EOF.
func TestOpenMetricsGrammar(t *testing.T) {
	t.Parallel()
	r := report(t)
	var buf bytes.Buffer
	require.NoError(t, render.OpenMetrics(&buf, r))
	text := buf.String()
	require.True(t, strings.HasSuffix(text, "# EOF\n"))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	name := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$`)
	seen := map[string]bool{}
	family, typ := "", ""
	suffixes := map[string]bool{}
	for i, l := range lines {
		if i == len(lines)-1 {
			assert.Equal(t, "# EOF", l)
			break
		}
		if strings.HasPrefix(l, "# TYPE ") {
			f := strings.Fields(l)
			require.Len(t, f, 4, l)
			require.Regexp(t, name, f[2])
			assert.False(t, seen[f[2]], "family %s announced twice", f[2])
			seen[f[2]] = true
			assert.Contains(t, []string{"gauge", "summary", "counter", "unknown"}, f[3])
			if typ == "summary" {
				assert.True(t, suffixes["_count"] && suffixes["_sum"], "summary %s needs _count and _sum", family)
			}
			family, typ, suffixes = f[2], f[3], map[string]bool{}
			continue
		}
		if strings.HasPrefix(l, "# HELP ") {
			assert.True(t, strings.HasPrefix(l, "# HELP "+family+" "), l)
			continue
		}
		m := sample.FindStringSubmatch(l)
		require.NotNil(t, m, "not a sample line: %q", l)
		n := m[1]
		switch {
		case n == family:
		case typ == "summary" && (n == family+"_count" || n == family+"_sum"):
			suffixes[strings.TrimPrefix(n, family)] = true
		default:
			t.Errorf("sample %s outside its family %s", n, family)
		}
		if typ == "summary" && n == family {
			assert.Contains(t, m[3], `quantile="`)
		}
	}
	assert.Contains(t, text, `buildlock_history_verified{lock="unity-seats"} 1`)
	assert.Contains(t, text, `buildlock_history_violations{lock="seats-<b>&\"x\""} 2`)
	assert.Contains(t, text, `buildlock_history_whatif_wait_seconds{lock="unity-seats",seats="4",quantile="0.95"}`)
}

func TestTextShowsTheFirstViolationSideBySide(t *testing.T) {
	t.Parallel()
	r := report(t)
	var buf bytes.Buffer
	require.NoError(t, render.Text(&buf, r))
	out := buf.String()
	assert.Contains(t, out, "lock unity-seats on example-org/build-lock@lock-state: ")
	assert.Contains(t, out, "FIRST VIOLATION  rule foreign-author")
	assert.Contains(t, out, "commit  "+strings.Repeat("ab", 20))
	assert.Regexp(t, `(?m)^  \{ +   \{$`, out, "equal lines side by side")
	assert.Regexp(t, `(?m)^    "a": 1 +<\s*$`, out, "a line only in the parent")
	assert.Regexp(t, `(?m)^ +>   "a": 2,$`, out, "a line only in this commit")
	assert.Regexp(t, `(?m)^ +>   "b": "y+…$`, out, "long lines are cut at the column width")
	assert.Contains(t, out, "transitions: acquire ")
}

func TestJSONRoundTrips(t *testing.T) {
	t.Parallel()
	r := report(t)
	var buf bytes.Buffer
	require.NoError(t, render.JSON(&buf, r))
	var m struct {
		Locks []struct {
			Lock   string
			Verify struct {
				Status  string
				Commits int
			}
			Stats *struct {
				Admissions int
				Wait       struct {
					P95 float64 `json:"p95_seconds"`
				}
			}
			WhatIf *struct{ Scenarios []struct{ Seats int } } `json:"what_if"`
		}
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	require.Len(t, m.Locks, 2)
	assert.Equal(t, "clean", m.Locks[0].Verify.Status)
	assert.Equal(t, r.Locks[0].Verify.Commits, m.Locks[0].Verify.Commits)
	assert.Equal(t, r.Locks[0].Stats.Admissions, m.Locks[0].Stats.Admissions)
	assert.Equal(t, r.Locks[0].Stats.Wait.P95, m.Locks[0].Stats.Wait.P95)
	assert.Len(t, m.Locks[0].WhatIf.Scenarios, 4)
	assert.False(t, r.OK())
}
