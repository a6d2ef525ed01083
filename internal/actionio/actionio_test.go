package actionio_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// fakeGetenv returns a getenv that serves env and fails the test on any key
// not listed in allowed ∪ keys(env): reading an unexpected variable is a bug.
func fakeGetenv(t *testing.T, env map[string]string, allowed ...string) actionio.GetenvFunc {
	t.Helper()
	ok := map[string]bool{}
	for k := range env {
		ok[k] = true
	}
	for _, k := range allowed {
		ok[k] = true
	}
	return func(key string) string {
		assert.True(t, ok[key], "unexpected getenv(%q)", key)
		return env[key]
	}
}

func tempFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestInputEnvNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"INPUT_LOCK-NAME", "INPUT_LOCK_NAME"}, actionio.InputEnvNames("lock-name"))
	assert.Equal(t, []string{"INPUT_OPERATION"}, actionio.InputEnvNames("operation"))
	assert.Equal(t, []string{"INPUT_A_B"}, actionio.InputEnvNames("a b"))
}

func TestInputSpellings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"hyphen spelling", map[string]string{"INPUT_LOCK-NAME": "a"}, "a"},
		{"underscore fallback", map[string]string{"INPUT_LOCK_NAME": "b"}, "b"},
		{"hyphen wins", map[string]string{"INPUT_LOCK-NAME": "a", "INPUT_LOCK_NAME": "b"}, "a"},
		{"empty hyphen is absent", map[string]string{"INPUT_LOCK-NAME": "", "INPUT_LOCK_NAME": "b"}, "b"},
		{"trimmed", map[string]string{"INPUT_LOCK-NAME": "  a \n"}, "a"},
		{"absent", map[string]string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := actionio.New(fakeGetenv(t, tc.env, "INPUT_LOCK-NAME", "INPUT_LOCK_NAME"), &bytes.Buffer{})
			assert.Equal(t, tc.want, a.Input("lock-name"))
			assert.Equal(t, []string{"lock-name"}, a.InputsRead())
		})
	}
}

func TestParsers(t *testing.T) {
	t.Parallel()
	lockRE := regexp.MustCompile(`^[A-Za-z0-9._-]{1,80}$`)
	tests := []struct {
		name     string
		value    string // value of INPUT_X; "" = absent
		parse    func(a *actionio.IO) (any, error)
		want     any
		wantCode string
	}{
		{"required present", "v", func(a *actionio.IO) (any, error) { return a.Required("x") }, "v", ""},
		{"required absent", "", func(a *actionio.IO) (any, error) { return a.Required("x") }, nil, actionio.CodeRequired},
		{"required blank", "   ", func(a *actionio.IO) (any, error) { return a.Required("x") }, nil, actionio.CodeRequired},
		{"bool TRUE", " TRUE ", func(a *actionio.IO) (any, error) { return a.Bool("x", false) }, true, ""},
		{"bool False", "False", func(a *actionio.IO) (any, error) { return a.Bool("x", true) }, false, ""},
		{"bool default", "", func(a *actionio.IO) (any, error) { return a.Bool("x", true) }, true, ""},
		{"bool yes", "yes", func(a *actionio.IO) (any, error) { return a.Bool("x", false) }, nil, actionio.CodeInvalidBoolean},
		{"bool 1", "1", func(a *actionio.IO) (any, error) { return a.Bool("x", false) }, nil, actionio.CodeInvalidBoolean},
		{"posint 15", "15", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, 15, ""},
		{"posint default", "", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, 3, ""},
		{"posint 0", "0", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint -1", "-1", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint +1", "+1", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint max ok", "60", func(a *actionio.IO) (any, error) { return a.PositiveIntMax("x", 3, 60) }, 60, ""},
		{"posint over max", "61", func(a *actionio.IO) (any, error) { return a.PositiveIntMax("x", 3, 60) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint overflow", "9223372036854775808", func(a *actionio.IO) (any, error) { return a.PositiveIntMax("x", 3, 60) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint 1.5", "1.5", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, nil, actionio.CodeInvalidPositiveInt},
		{"posint overflow", "99999999999999999999999", func(a *actionio.IO) (any, error) { return a.PositiveInt("x", 3) }, nil, actionio.CodeInvalidPositiveInt},
		{"nonneg 0", "0", func(a *actionio.IO) (any, error) { return a.NonNegativeIntMax("x", 5, 86400) }, 0, ""},
		{"nonneg max", "86400", func(a *actionio.IO) (any, error) { return a.NonNegativeIntMax("x", 5, 86400) }, 86400, ""},
		{"nonneg over", "86401", func(a *actionio.IO) (any, error) { return a.NonNegativeIntMax("x", 5, 86400) }, nil, actionio.CodeInvalidNonNegInt},
		{"nonneg default", "", func(a *actionio.IO) (any, error) { return a.NonNegativeIntMax("x", 5, 86400) }, 5, ""},
		{"pattern ok", "wallstop-organization-builds", func(a *actionio.IO) (any, error) { return a.Pattern("x", "", lockRE) }, "wallstop-organization-builds", ""},
		{"pattern bad", "a/b", func(a *actionio.IO) (any, error) { return a.Pattern("x", "", lockRE) }, nil, actionio.CodePatternMismatch},
		{"pattern absent", "", func(a *actionio.IO) (any, error) { return a.Pattern("x", "", lockRE) }, nil, actionio.CodeRequired},
		{"pattern default", "", func(a *actionio.IO) (any, error) { return a.Pattern("x", "lock-state", lockRE) }, "lock-state", ""},
		{"edge ok internal spaces", "a b:c", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, "a b:c", ""},
		{"edge default", "", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, "default", ""},
		{"edge leading", " a", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, nil, actionio.CodeEdgeWhitespaceOrLine},
		{"edge trailing", "a\t", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, nil, actionio.CodeEdgeWhitespaceOrLine},
		{"edge newline", "a\nb", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, nil, actionio.CodeEdgeWhitespaceOrLine},
		{"edge only spaces", "  ", func(a *actionio.IO) (any, error) { return a.NoEdgeWhitespaceNoNewline("x", "default") }, nil, actionio.CodeEdgeWhitespaceOrLine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := actionio.New(fakeGetenv(t, map[string]string{"INPUT_X": tc.value}), &bytes.Buffer{})
			got, err := tc.parse(a)
			if tc.wantCode == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			var ie *actionio.InputError
			require.True(t, errors.As(err, &ie), "want *InputError, got %v", err)
			assert.Equal(t, "x", ie.Input)
			assert.Equal(t, tc.wantCode, ie.Code)
			assert.True(t, strings.HasPrefix(err.Error(), "input x: "), err.Error())
			if v := strings.TrimSpace(tc.value); len(v) >= 4 { // short values collide with message words
				assert.NotContains(t, err.Error(), v, "error must not echo the value")
			}
		})
	}
}

func TestInputErrorNeverEchoesSecret(t *testing.T) {
	t.Parallel()
	secret := "ghs_SuperSecretTokenValue"
	a := actionio.New(fakeGetenv(t, map[string]string{"INPUT_GITHUB-TOKEN": " " + secret}), &bytes.Buffer{})
	_, err := a.NoEdgeWhitespaceNoNewline("github-token", "")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
	_, err = a.Pattern("github-token", "", regexp.MustCompile(`^x$`))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
}

func TestIntInRangeTolerant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  actionio.Tolerant
		warn  bool
	}{
		{"", actionio.Tolerant{Value: 120}, false},
		{"0", actionio.Tolerant{Value: 0, Set: true}, false},
		{"30", actionio.Tolerant{Value: 30, Set: true}, false},
		{"3600", actionio.Tolerant{Value: 3600, Set: true}, false},
		{"29", actionio.Tolerant{Value: 120}, true},
		{"3601", actionio.Tolerant{Value: 120}, true},
		{"abc", actionio.Tolerant{Value: 120}, true},
		{"-5", actionio.Tolerant{Value: 120}, true},
	}
	for _, tc := range tests {
		t.Run("value="+tc.value, func(t *testing.T) {
			t.Parallel()
			a := actionio.New(fakeGetenv(t, map[string]string{"INPUT_RELEASE-RETRY-DEADLINE-SECONDS": tc.value}, "INPUT_RELEASE_RETRY_DEADLINE_SECONDS"), &bytes.Buffer{})
			got := a.IntInRangeTolerant("release-retry-deadline-seconds", 120, 30, 3600, 0)
			assert.Equal(t, tc.want.Value, got.Value)
			assert.Equal(t, tc.want.Set, got.Set)
			if tc.warn {
				assert.Contains(t, got.Warning, "release-retry-deadline-seconds")
				assert.Contains(t, got.Warning, "30-3600 or 0")
				assert.NotContains(t, got.Warning, "value="+tc.value)
			} else {
				assert.Empty(t, got.Warning)
			}
		})
	}
}

func TestSetOutput(t *testing.T) {
	t.Parallel()
	out := tempFile(t)
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_OUTPUT": out}), &bytes.Buffer{})
	require.NoError(t, a.SetOutput("lock-name", "l"))
	require.NoError(t, a.SetOutput("resource-reason", "line1\nline2"))
	require.NoError(t, a.SetOutput("lock-name", "again"))
	const d = "_GitHubActionsFileCommandDelimeter_"
	want := "lock-name<<" + d + "\nl\n" + d + "\n" +
		"resource-reason<<" + d + "\nline1\nline2\n" + d + "\n" +
		"lock-name<<" + d + "\nagain\n" + d + "\n"
	assert.Equal(t, want, read(t, out))
	assert.Equal(t, []string{"lock-name", "resource-reason"}, a.OutputsWritten())
}

func TestSetOutputRefusals(t *testing.T) {
	t.Parallel()
	out := tempFile(t)
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_OUTPUT": out}), &bytes.Buffer{})
	assert.Error(t, a.SetOutput("x", "a\n_GitHubActionsFileCommandDelimeter_\ninjected=1"))
	assert.Error(t, a.SetOutput("bad\nname", "v"))
	assert.Empty(t, read(t, out))
}

func TestSetOutputUnsetIsSkipped(t *testing.T) {
	t.Parallel()
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_OUTPUT": ""}), &bytes.Buffer{})
	require.NoError(t, a.SetOutput("acquired", "true"))
	assert.Equal(t, []string{"acquired"}, a.OutputsWritten())
}

func TestSetOutputUnwritableIsError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // a directory cannot be opened for append
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_OUTPUT": dir}), &bytes.Buffer{})
	assert.Error(t, a.SetOutput("acquired", "true"))
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	st := tempFile(t)
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_STATE": st}), &bytes.Buffer{})
	require.NoError(t, a.SaveState("build_lock_cleanup", "enabled"))
	const d = "_GitHubActionsFileCommandDelimeter_"
	assert.Equal(t, "build_lock_cleanup<<"+d+"\nenabled\n"+d+"\n", read(t, st))

	post := actionio.New(fakeGetenv(t, map[string]string{"STATE_build_lock_cleanup": "enabled"}), &bytes.Buffer{})
	assert.Equal(t, "enabled", post.GetState("build_lock_cleanup"))

	none := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_STATE": ""}), &bytes.Buffer{})
	assert.ErrorIs(t, none.SaveState("k", "v"), actionio.ErrFileCommandUnavailable)
}

func TestSummary(t *testing.T) {
	t.Parallel()
	sum := tempFile(t)
	a := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_STEP_SUMMARY": sum}), &bytes.Buffer{})
	require.NoError(t, a.Summary("## Build lock\n"))
	require.NoError(t, a.Summary("| a | b |"))
	assert.Equal(t, "## Build lock\n\n| a | b |\n", read(t, sum))

	none := actionio.New(fakeGetenv(t, map[string]string{"GITHUB_STEP_SUMMARY": ""}), &bytes.Buffer{})
	assert.ErrorIs(t, none.Summary("x"), actionio.ErrFileCommandUnavailable)
}

func TestWorkflowCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		emit func(a *actionio.IO)
		want string
	}{
		{"warning one line and percent", func(a *actionio.IO) { a.Warning("100% done\r\nnext line") }, "::warning::100%25 done next line\n"},
		{"error format verbs are data", func(a *actionio.IO) { a.Error("bad %s %d") }, "::error::bad %25s %25d\n"},
		{"notice", func(a *actionio.IO) { a.Notice("not a PR") }, "::notice::not a PR\n"},
		{"group", func(a *actionio.IO) { a.Group("Acquire\nlock"); a.EndGroup() }, "::group::Acquire lock\n::endgroup::\n"},
		{"mask multi-line", func(a *actionio.IO) { a.Mask("-----BEGIN-----\r\nabc\n\n-----END-----") }, "::add-mask::-----BEGIN-----\n::add-mask::abc\n::add-mask::-----END-----\n"},
		{"mask empty", func(a *actionio.IO) { a.Mask("") }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			a := actionio.New(fakeGetenv(t, nil), &buf)
			tc.emit(a)
			assert.Equal(t, tc.want, buf.String())
		})
	}
}

func TestActionRepository(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"composite env", map[string]string{"BUILD_LOCK_ACTION_REPOSITORY": "o/r", "GITHUB_ACTION_REPOSITORY": "x/y"}, "o/r"},
		{"node runner env", map[string]string{"GITHUB_ACTION_REPOSITORY": "x/y"}, "x/y"},
		{"local action", map[string]string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := actionio.New(fakeGetenv(t, tc.env, "BUILD_LOCK_ACTION_REPOSITORY", "GITHUB_ACTION_REPOSITORY"), &bytes.Buffer{})
			assert.Equal(t, tc.want, a.ActionRepository())
		})
	}
}

func TestRequireOutputFile(t *testing.T) {
	a := actionio.New(func(string) string { return "" }, &bytes.Buffer{})
	require.ErrorIs(t, a.RequireOutputFile(), actionio.ErrFileCommandUnavailable)
	b := actionio.New(func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return filepath.Join(t.TempDir(), "out")
		}
		return ""
	}, &bytes.Buffer{})
	require.NoError(t, b.RequireOutputFile())
}
