package classifychanges

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of the git diff (unity-lifecycle-facts.md §5).
const (
	// MaxDiffOutput bounds git's stdout; more is an error (the change is
	// then classified as requiring Unity by the failure itself).
	MaxDiffOutput = 16 << 20
	// maxStderr bounds what is kept of git's stderr for the error message.
	maxStderr = 4 << 10
	// DiffTimeout bounds one git run.
	DiffTimeout = 2 * time.Minute
)

// GitSearchPath is where git is looked for, and the PATH git itself gets.
// It never comes from the caller's environment.
const GitSearchPath = "/usr/bin:/bin"

// GitEnv is the complete environment of the git process: no inherited
// variable (in particular no GIT_DIR, GIT_CONFIG_*, GIT_EXTERNAL_DIFF or
// GIT_REPLACE_REF_BASE), no global or system configuration
// (unity-lifecycle-facts.md §5).
func GitEnv() []string {
	return []string{
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_SYSTEM=" + os.DevNull,
		"HOME=/tmp",
		"LANG=C",
		"LC_ALL=C",
		"PATH=" + GitSearchPath,
	}
}

// DiffArgs are git's arguments for the changed paths between base and head:
// --no-replace-objects (refs/replace cannot swap the commits), --name-only
// -z (NUL-separated names, no quoting), --no-renames (a rename is a delete
// plus an add, so both paths are classified), --no-ext-diff and
// --no-textconv (no repository-configured program runs), and "--" so no
// later word is taken for an option.
func DiffArgs(base, head string) []string {
	return []string{"--no-replace-objects", "diff", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "-z", base, head, "--"}
}

// ErrGitNotFound reports that no git executable is in GitSearchPath.
var ErrGitNotFound = errors.New("git was not found in " + GitSearchPath + " (the classifier runs on a Linux or macOS runner with git installed)")

// FindGit resolves git once, to an absolute path, from GitSearchPath only.
func FindGit() (string, error) {
	for _, dir := range filepath.SplitList(GitSearchPath) {
		p := filepath.Join(dir, "git")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrGitNotFound
}

// Git runs one resolved git binary in a work tree.
type Git struct {
	// Path is the absolute path of git (see FindGit).
	Path string
	// Dir is the repository work tree (GITHUB_WORKSPACE).
	Dir string
	// Limit bounds stdout; 0 means MaxDiffOutput.
	Limit int
}

// ChangedPaths returns git's NUL-separated list of the paths changed
// between base and head, raw. Output beyond MaxDiffOutput, a non-zero exit,
// or the time limit is an error naming git's (bounded) stderr.
func (g Git) ChangedPaths(ctx context.Context, base, head string) ([]byte, error) {
	if !filepath.IsAbs(g.Path) {
		return nil, fmt.Errorf("git path %q is not absolute", g.Path)
	}
	ctx, cancel := context.WithTimeout(ctx, DiffTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Path, DiffArgs(base, head)...)
	cmd.Dir = g.Dir
	cmd.Env = GitEnv()
	cmd.Stdin = nil
	var stderr boundedBuffer
	stderr.limit = maxStderr
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start git: %w", err)
	}
	limit := g.Limit
	if limit <= 0 {
		limit = MaxDiffOutput
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, int64(limit)+1))
	overflow := len(out) > limit
	if overflow {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	switch {
	case overflow:
		return nil, fmt.Errorf("git diff printed more than %d bytes of path names", limit)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git diff did not finish within %s: %w", DiffTimeout, ctx.Err())
	case readErr != nil:
		return nil, fmt.Errorf("read git output: %w", readErr)
	case waitErr != nil:
		return nil, fmt.Errorf("git diff %s %s failed (%v): %s; the checkout must contain both commits (actions/checkout with fetch-depth: 0)",
			base, head, waitErr, oneLine(stderr.String()))
	}
	return out, nil
}

// boundedBuffer keeps the first limit bytes written to it.
type boundedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// oneLine collapses git's stderr into one bounded, printable line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
