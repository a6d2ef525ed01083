// Package edgesettings holds the pieces every binary's settings value shares
// (issue 24): the problem list a LoadSettings constructor fills while it
// validates every input, the one typed error that lists them all, the
// file-command paths read once from the environment, and the two input
// spellings. A binary reads its environment only through its settings.go,
// which uses this package; below that edge nothing calls getenv.
package edgesettings

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Problems collects every invalid setting found by one LoadSettings, in
// the order they were found. The zero value is ready to use.
type Problems struct{ errs []error }

// Add records err; a nil err is ignored.
func (p *Problems) Add(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

// Len returns the number of problems recorded.
func (p *Problems) Len() int { return len(p.errs) }

// First returns the first problem recorded, or nil.
func (p *Problems) First() error {
	if len(p.errs) == 0 {
		return nil
	}
	return p.errs[0]
}

// Err returns nil when no problem was recorded, else one *Error listing
// them all.
func (p *Problems) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return &Error{Problems: append([]error(nil), p.errs...)}
}

// Error is a refused settings value: every problem one LoadSettings found,
// in order. Its reason code is the first problem's (the ::error title, as
// a single refusal's was); errors.As and errors.Is see every problem.
type Error struct {
	Problems []error
}

// Error implements error: the one problem's message, or every message
// joined with "; " after their count, each followed by its reason code in
// brackets when it has one its message does not already name.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
		if code := Code(p); code != "" && !strings.Contains(msgs[i], "(rule "+code+")") && !strings.Contains(msgs[i], code) {
			msgs[i] += " [" + code + "]"
		}
	}
	return strconv.Itoa(len(e.Problems)) + " invalid settings: " + strings.Join(msgs, "; ")
}

// Unwrap returns every problem.
func (e *Error) Unwrap() []error { return e.Problems }

// ReasonCode returns the first problem's code: its own ReasonCode when it
// has one, "input-<code>" for an *actionio.InputError (the code
// lockaction.ReasonCode gives a single input refusal), else "".
func (e *Error) ReasonCode() string {
	if len(e.Problems) == 0 {
		return ""
	}
	return Code(e.Problems[0])
}

// Codes returns every problem's code (see ReasonCode), in order.
func (e *Error) Codes() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = Code(p)
	}
	return out
}

// Code returns err's stable reason code: its own ReasonCode when it has
// one, a lockstate rule's code, "input-<code>" for an *actionio.InputError,
// a GitHub error's code (github-api-<status> without one), else "". It is
// the code lockaction.ReasonCode gives the same error.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var r interface{ ReasonCode() string }
	if errors.As(err, &r) && r.ReasonCode() != "" {
		return r.ReasonCode()
	}
	if c := lockstate.CodeOf(err); c != "" {
		return string(c)
	}
	var in *actionio.InputError
	if errors.As(err, &in) {
		return "input-" + in.Code
	}
	var ge *ghclient.Error
	if errors.As(err, &ge) {
		switch {
		case ge.Code != "":
			return ge.Code
		case ge.Status != 0:
			return "github-api-" + strconv.Itoa(ge.Status)
		}
		return "github-api-unavailable"
	}
	return ""
}

// Input returns the untrimmed value of input name under either spelling
// (INPUT_LOCK-NAME wins over INPUT_LOCK_NAME, as actionio.IO.RawInput),
// "" when absent.
func Input(getenv func(string) string, name string) string {
	for _, key := range actionio.InputEnvNames(name) {
		if v := getenv(key); v != "" {
			return v
		}
	}
	return ""
}

// The file-command variables an action writes through.
const (
	EnvOutput  = "GITHUB_OUTPUT"
	EnvSummary = "GITHUB_STEP_SUMMARY"
	EnvState   = "GITHUB_STATE"
)

// Files are the file-command paths of one step, read once. The core's
// actionio.IO is built over Files.Getenv, so writing an output or the
// summary reads no environment.
type Files struct {
	Output, Summary, State string
}

// IO returns the workflow-command writer of a binary whose settings are
// read: an actionio.IO over w that sees only the file-command paths
// (ReadFiles), so nothing that writes through it can read an input or any
// other variable below the edge.
func IO(getenv func(string) string, w io.Writer) *actionio.IO {
	return actionio.New(ReadFiles(getenv).Getenv, w)
}

// ReadFiles reads the file-command paths (not validated: an action that
// needs GITHUB_OUTPUT checks Output itself).
func ReadFiles(getenv func(string) string) Files {
	return Files{Output: getenv(EnvOutput), Summary: getenv(EnvSummary), State: getenv(EnvState)}
}

// Getenv serves the settled file-command paths and "" for every other
// key: the environment an actionio.IO below the edge may see.
func (f Files) Getenv(key string) string {
	switch key {
	case EnvOutput:
		return f.Output
	case EnvSummary:
		return f.Summary
	case EnvState:
		return f.State
	}
	return ""
}
