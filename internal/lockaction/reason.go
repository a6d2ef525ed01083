package lockaction

import (
	"errors"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Reasoned is implemented by errors that carry their own stable reason code
// (for example acquire's admission results: timeout, superseded,
// account-blocked).
type Reasoned interface {
	error
	ReasonCode() string
}

// Refuse returns a *RefusalError with rule as its stable reason code.
func Refuse(rule, format string, args ...any) error { return refuse(rule, format, args...) }

// ReasonCode returns the stable reason code of err, searching its chain
// outermost first: a Reasoned error's own code, a lockstate *Error's Code
// (invalid-json, duplicate-holder, unsupported-schema, holder-id-collision,
// ...), a *RefusalError's Rule, an input error as input-<code>, and a GitHub
// API failure as GITHUB_API_RETRY_EXHAUSTED or github-api-<status>. It
// returns "" when err carries none.
func ReasonCode(err error) string {
	if err == nil {
		return ""
	}
	var r Reasoned
	if errors.As(err, &r) && r.ReasonCode() != "" {
		return r.ReasonCode()
	}
	if c := lockstate.CodeOf(err); c != "" {
		return string(c)
	}
	var refusal *RefusalError
	if errors.As(err, &refusal) {
		return refusal.Rule
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
			return "github-api-" + itoa(ge.Status)
		}
		return "github-api-unavailable"
	}
	return ""
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// reportRefusal prints err as ::error title=<code>::<message> and appends
// the code and message to the job summary, so a refusal can be searched for
// by its code in both places. A missing GITHUB_STEP_SUMMARY (local runs) is
// not a problem.
func reportRefusal(a *actionio.IO, err error) {
	code := ReasonCode(err)
	msg := actionio.OneLine(err.Error())
	a.ErrorCode(code, msg)
	title := "Refused"
	if code != "" {
		title += ": " + markdown.Code(code)
	}
	_ = a.Summary("### " + title + "\n\n" + markdown.Message(msg) + "\n")
}
