package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Bump is how far a set of commits moves the version.
type Bump int

// The bumps, weakest first.
const (
	BumpNone Bump = iota
	BumpPatch
	BumpMinor
	BumpMajor
)

func (b Bump) String() string {
	return [...]string{"none", "patch", "minor", "major"}[b]
}

// Commit is one parsed commit message (https://www.conventionalcommits.org/en/v1.0.0/).
type Commit struct {
	SHA      string
	Type     string // lower-cased; "" when the header is not conventional
	Scope    string
	Subject  string
	Breaking bool
}

// header is "type(scope)!: subject"; the type is letters only.
var header = regexp.MustCompile(`^([A-Za-z]+)(?:\(([^()\r\n]*)\))?(!)?: (\S.*)$`)

// breakingFooter is a BREAKING CHANGE (or BREAKING-CHANGE) footer line.
var breakingFooter = regexp.MustCompile(`(?m)^BREAKING[ -]CHANGE: \S`)

// ParseCommit parses one commit message: the first line is the header, a
// "!" after the type or a BREAKING CHANGE footer marks a breaking change.
// A message whose header is not conventional has Type "" (and never
// releases, even with a footer).
func ParseCommit(sha, msg string) Commit {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	first, body, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	c := Commit{SHA: sha, Subject: strings.TrimSpace(first)}
	m := header.FindStringSubmatch(strings.TrimRight(first, " \t"))
	if m == nil {
		return c
	}
	c.Type, c.Scope, c.Subject = strings.ToLower(m[1]), m[2], strings.TrimSpace(m[4])
	c.Breaking = m[3] == "!" || breakingFooter.MatchString(body)
	return c
}

// BumpOf is the bump one commit asks for: a breaking change is major, feat
// minor, fix and perf patch; every other type (docs, test, ci, build,
// chore, refactor, style, ...) and a non-conventional message none.
func BumpOf(c Commit) Bump {
	switch {
	case c.Type == "":
		return BumpNone
	case c.Breaking:
		return BumpMajor
	case c.Type == "feat":
		return BumpMinor
	case c.Type == "fix" || c.Type == "perf":
		return BumpPatch
	}
	return BumpNone
}

// Version is a release version vMAJOR.MINOR.PATCH.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less orders versions.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

var tagRE = regexp.MustCompile(`^v(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`)

// ParseTag parses a release tag; pre-releases, the moving major aliases
// (v1) and anything else are not releases and return false.
func ParseTag(tag string) (Version, bool) {
	m := tagRE.FindStringSubmatch(tag)
	if m == nil {
		return Version{}, false
	}
	var n [3]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return Version{n[0], n[1], n[2]}, true
}

// Apply returns v bumped by b. Before 1.0.0 everything may change
// (semver §4), so a breaking change bumps the minor version there; the
// step to 1.0.0 is a deliberate release, never automatic.
func (v Version) Apply(b Bump) Version {
	switch {
	case b == BumpMajor && v.Major > 0:
		return Version{v.Major + 1, 0, 0}
	case b == BumpMajor || b == BumpMinor:
		return Version{v.Major, v.Minor + 1, 0}
	case b == BumpPatch:
		return Version{v.Major, v.Minor, v.Patch + 1}
	}
	return v
}

// Decision is what the release workflow does.
type Decision struct {
	Release  bool
	Previous string // "" before the first release
	Version  string
	Bump     Bump
	// Alias is the moving major tag (v1 for v1.x.y) to force-update, ""
	// before 1.0.0.
	Alias   string
	Commits []Commit // the releasable commits, newest first
}

// Decide picks the next version from the existing tags and the commits
// since the latest release tag (newest first). Nothing releasable → no
// release. The first release is initial, whatever the commits ask for.
func Decide(tags []string, commits []Commit, initial Version) Decision {
	var latest *Version
	for _, t := range tags {
		if v, ok := ParseTag(t); ok && (latest == nil || latest.Less(v)) {
			latest = &v
		}
	}
	d := Decision{}
	for _, c := range commits {
		if b := BumpOf(c); b != BumpNone {
			d.Commits = append(d.Commits, c)
			d.Bump = max(d.Bump, b)
		}
	}
	if d.Bump == BumpNone {
		if latest != nil {
			d.Previous, d.Version = latest.String(), latest.String()
		}
		return d
	}
	next := initial
	if latest != nil {
		d.Previous = latest.String()
		next = latest.Apply(d.Bump)
	}
	d.Release, d.Version = true, next.String()
	if next.Major >= 1 {
		d.Alias = fmt.Sprintf("v%d", next.Major)
	}
	return d
}

// closing matches a GitHub closing keyword followed by an issue reference
// (https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/linking-a-pull-request-to-an-issue).
var closing = regexp.MustCompile(`(?i)\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)((?:[\w.-]+/[\w.-]+)?#[0-9]+)`)

// Defang keeps an issue reference (GitHub still links it and notes the
// mention on the issue) but breaks the closing keyword in front of it, so a
// release notice never resolves an issue or pull request: acceptance is
// decided on the issue, not by a release.
func Defang(s string) string {
	return closing.ReplaceAllString(s, "$1 (see $3)")
}

// Notes renders the release notes: breaking changes, features and fixes,
// each line the commit subject and its short SHA.
func Notes(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", d.Version)
	if d.Previous != "" {
		fmt.Fprintf(&b, "Changes since %s.\n\n", d.Previous)
	}
	sections := []struct {
		title string
		keep  func(Commit) bool
	}{
		{"Breaking changes", func(c Commit) bool { return c.Breaking }},
		{"Features", func(c Commit) bool { return !c.Breaking && c.Type == "feat" }},
		{"Fixes", func(c Commit) bool { return !c.Breaking && c.Type != "feat" }},
	}
	for _, s := range sections {
		var lines []string
		for _, c := range d.Commits {
			if !s.keep(c) {
				continue
			}
			line := "- "
			if c.Scope != "" {
				line += "**" + c.Scope + ":** "
			}
			short := c.SHA
			if len(short) > 12 {
				short = short[:12]
			}
			lines = append(lines, line+Defang(c.Subject)+" ("+short+")")
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "### %s\n\n%s\n\n", s.title, strings.Join(lines, "\n"))
		}
	}
	b.WriteString("Pin the commit this tag points to (docs/packaging.md); its .github/dist/manifest.json lists every binary's SHA-256.\n")
	return b.String()
}
