package actionio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/sethvargo/go-githubactions"
)

// GetenvFunc reads one environment variable; it has the signature of os.Getenv.
type GetenvFunc func(key string) string

// fileCommandDelimiter is the fixed heredoc delimiter go-githubactions v1.3.2
// uses for GITHUB_OUTPUT / GITHUB_STATE entries (actions.go multiLineFileDelim).
// A value containing it on a line of its own could inject extra outputs, so
// such values are refused.
const fileCommandDelimiter = "_GitHubActionsFileCommandDelimeter_"

// ErrFileCommandUnavailable reports that a file-backed channel
// (GITHUB_STATE or GITHUB_STEP_SUMMARY) is not configured in the environment.
var ErrFileCommandUnavailable = errors.New("actionio: file command variable is not set")

// IO is the Actions runtime as seen by one binary: inputs from an injected
// getenv, workflow commands to an injected writer, and file commands to the
// files named by GITHUB_OUTPUT, GITHUB_STATE and GITHUB_STEP_SUMMARY.
//
// IO records every input name read and every output name written so that a
// contract test can compare them with the action.yml that launches the
// binary. It is safe for concurrent use.
type IO struct {
	gha    *githubactions.Action
	getenv GetenvFunc
	w      io.Writer

	mu      sync.Mutex
	inputs  []string
	outputs []string
	seenIn  map[string]bool
	seenOut map[string]bool
}

// New returns an IO reading the environment through getenv and writing
// workflow commands (::warning:: and friends) to w, which in production is
// the process's stdout. A nil getenv or writer panics: injection is the point.
func New(getenv GetenvFunc, w io.Writer) *IO {
	if getenv == nil || w == nil {
		panic("actionio.New: getenv and writer are required")
	}
	return &IO{
		gha: githubactions.New(
			githubactions.WithGetenv(githubactions.GetenvFunc(getenv)),
			githubactions.WithWriter(w),
		),
		getenv:  getenv,
		w:       w,
		seenIn:  map[string]bool{},
		seenOut: map[string]bool{},
	}
}

// InputEnvNames returns the environment variable names an input may arrive
// under, in lookup order: the runner's hyphen-preserving spelling
// (INPUT_LOCK-NAME) and the underscore spelling used by composite steps
// (INPUT_LOCK_NAME). For a name without hyphens both are equal and only one
// is returned.
func InputEnvNames(name string) []string {
	hyphen := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
	under := strings.ReplaceAll(hyphen, "-", "_")
	if under == hyphen {
		return []string{hyphen}
	}
	return []string{hyphen, under}
}

// RawInput returns the untrimmed value of input name, or "" when absent.
// The hyphenated spelling wins; the underscore spelling is consulted only when
// the hyphenated one is empty. The name is recorded as read.
func (a *IO) RawInput(name string) string {
	a.recordInput(name)
	for _, key := range InputEnvNames(name) {
		if v := a.getenv(key); v != "" {
			return v
		}
	}
	return ""
}

// Input returns the value of input name with surrounding whitespace trimmed,
// like go-githubactions GetInput, or "" when absent. See [IO.RawInput].
func (a *IO) Input(name string) string {
	return strings.TrimSpace(a.RawInput(name))
}

// InputsRead returns the names of every input read so far, in first-read
// order.
func (a *IO) InputsRead() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.inputs...)
}

// OutputsWritten returns the names of every output set so far (including
// outputs skipped because GITHUB_OUTPUT is unset), in first-write order.
func (a *IO) OutputsWritten() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.outputs...)
}

func (a *IO) recordInput(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.seenIn[name] {
		a.seenIn[name] = true
		a.inputs = append(a.inputs, name)
	}
}

func (a *IO) recordOutput(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.seenOut[name] {
		a.seenOut[name] = true
		a.outputs = append(a.outputs, name)
	}
}

// Getenv reads a non-input environment variable through the injected getenv
// (for example GITHUB_REPOSITORY). It exists so that callers never reach for
// os.Getenv below main.
func (a *IO) Getenv(key string) string { return a.getenv(key) }

// ActionRepository returns "owner/name" of the repository hosting the running
// action. Composite steps do not receive github.action_repository in their
// environment (https://github.com/actions/runner/issues/2473), so our
// composite action.yml files pass it explicitly as
// BUILD_LOCK_ACTION_REPOSITORY from the step's env: mapping (where the
// expression is evaluated, see https://github.com/actions/runner/issues/2525);
// node24 actions get GITHUB_ACTION_REPOSITORY from the runner. It returns ""
// when neither is set, for example for a local `uses: ./...` reference;
// lockaction.ParseTarget then takes the calling repository (GITHUB_REPOSITORY)
// unless lock-repository is given.
func (a *IO) ActionRepository() string {
	if v := strings.TrimSpace(a.getenv("BUILD_LOCK_ACTION_REPOSITORY")); v != "" {
		return v
	}
	return strings.TrimSpace(a.getenv("GITHUB_ACTION_REPOSITORY"))
}

// SelfTestAPIURLEnv names the API URL of the GitHub emulator that CI's
// self-test job starts (docs/packaging.md "Self-test"); see [IO.APIURL].
const SelfTestAPIURLEnv = "BUILD_LOCK_SELFTEST_API_URL"

// APIURL returns the REST API URL the binary talks to: GITHUB_API_URL,
// which the runner sets and a workflow cannot override
// (https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
// Only a local action (`uses: ./...`, so [IO.ActionRepository] is empty)
// honors [SelfTestAPIURLEnv] instead, and only when it is an http(s) URL
// on a loopback host: that is how the self-test job points the real entry
// points at the emulator it started. An action pinned from another
// repository never honors it, so a step that can write GITHUB_ENV cannot
// send a later step's App credentials anywhere else.
func (a *IO) APIURL() string {
	if v := strings.TrimSpace(a.getenv(SelfTestAPIURLEnv)); v != "" && a.ActionRepository() == "" && loopbackURL(v) {
		return v
	}
	return a.getenv("GITHUB_API_URL")
}

// loopbackURL reports whether raw is an http(s) URL whose host is
// 127.0.0.0/8, ::1 or localhost.
func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var outputNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fileCommand issues a name/value file command through the library, turning
// its panic on an unopenable file into an error.
func (a *IO) fileCommand(kind, name, value string, issue func(k, v string)) (err error) {
	if !outputNameRE.MatchString(name) {
		return fmt.Errorf("actionio: invalid %s name %q", kind, name)
	}
	if strings.Contains(value, fileCommandDelimiter) {
		return fmt.Errorf("actionio: %s %q value contains the file command delimiter", kind, name)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("actionio: write %s %q: %v", kind, name, r)
		}
	}()
	issue(name, value)
	return nil
}

// SetOutput sets step output name to value by appending a heredoc entry to the
// file named by GITHUB_OUTPUT (multi-line values are safe). As in the
// reference (spec §1.1) the write is silently skipped when GITHUB_OUTPUT is
// unset, which keeps standalone local runs working; the name is recorded
// either way.
func (a *IO) SetOutput(name, value string) error {
	a.recordOutput(name)
	if a.getenv("GITHUB_OUTPUT") == "" {
		return nil
	}
	return a.fileCommand("output", name, value, a.gha.SetOutput)
}

// SaveState saves value under name in GITHUB_STATE so that the post step can
// read it back as STATE_<name> with [IO.GetState]. It returns
// ErrFileCommandUnavailable when GITHUB_STATE is unset.
func (a *IO) SaveState(name, value string) error {
	if a.getenv("GITHUB_STATE") == "" {
		return fmt.Errorf("save state %q: GITHUB_STATE: %w", name, ErrFileCommandUnavailable)
	}
	return a.fileCommand("state", name, value, a.gha.SaveState)
}

// GetState returns the value a main step saved under name, read from the
// STATE_<name> environment variable the runner sets for the post step, or ""
// when absent. The name is used verbatim (state names are case-sensitive).
func (a *IO) GetState(name string) string {
	return a.getenv("STATE_" + name)
}

// Summary appends markdown to the job summary file named by
// GITHUB_STEP_SUMMARY. It returns ErrFileCommandUnavailable when the variable
// is unset.
func (a *IO) Summary(markdown string) (err error) {
	if a.getenv("GITHUB_STEP_SUMMARY") == "" {
		return fmt.Errorf("append step summary: GITHUB_STEP_SUMMARY: %w", ErrFileCommandUnavailable)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("actionio: append step summary: %v", r)
		}
	}()
	a.gha.AddStepSummary(markdown)
	return nil
}

// Mask registers secret with the runner's log redaction (::add-mask::).
// The runner only masks single lines
// (https://github.com/actions/toolkit/blob/main/docs/commands.md), so a
// multi-line secret such as a PEM key is masked line by line; blank lines are
// skipped because masking "" would be meaningless.
func (a *IO) Mask(secret string) {
	for _, line := range strings.Split(strings.ReplaceAll(secret, "\r\n", "\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		a.gha.AddMask(line)
	}
}

var lineBreaks = regexp.MustCompile(`[\r\n]+`)

// OneLine collapses every run of CR/LF characters in msg into one space, as
// the reference does for workflow-command data (spec §1.1). Percent-escaping
// is left to go-githubactions, which escapes %, CR and LF in every command
// message (command.go escapeData).
func OneLine(msg string) string {
	return lineBreaks.ReplaceAllString(msg, " ")
}

// Warning emits ::warning:: with msg collapsed to one line. msg is data, not
// a format string.
func (a *IO) Warning(msg string) { a.gha.Warningf("%s", OneLine(msg)) }

// Error emits ::error:: with msg collapsed to one line. It only logs; exiting
// is main's job.
func (a *IO) Error(msg string) { a.gha.Errorf("%s", OneLine(msg)) }

// Notice emits ::notice:: with msg collapsed to one line.
func (a *IO) Notice(msg string) { a.gha.Noticef("%s", OneLine(msg)) }

// Group starts a collapsible log group titled title (one line).
func (a *IO) Group(title string) { a.gha.Group(OneLine(title)) }

// EndGroup ends the current log group.
func (a *IO) EndGroup() { a.gha.EndGroup() }
