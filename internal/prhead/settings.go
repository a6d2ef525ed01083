package prhead

import (
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// Input names shared by the guard and acquire.
const (
	InputGitHubToken       = "github-token"
	InputPullRequestNumber = "pull-request-number"
	InputExpectedHeadSHA   = "expected-head-sha"
)

var (
	numberRE     = regexp.MustCompile(`^[1-9][0-9]*$`)
	expectedRE   = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	repositoryRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
)

// Inputs are the guard's inputs as read from the runner.
type Inputs struct {
	// Scoped is true when the run is a pull request run: GITHUB_EVENT_NAME
	// is pull_request or pull_request_target, or a PR input is non-empty.
	Scoped bool
	// Request is the validated request (only meaningful when Scoped).
	Request Request
}

// ParseInputs reads github-token (the caller masks it: Request.Token),
// pull-request-number and expected-head-sha through getenv. For a scoped
// run it validates them and GITHUB_REPOSITORY, returning an
// *actionio.InputError that names the rule and never the value. It sends no
// request. Several invalid values are all reported (errors.Join, the first
// one first).
func ParseInputs(getenv func(string) string, apiURL string) (Inputs, error) {
	a := actionio.New(getenv, io.Discard)
	token := a.Input(InputGitHubToken)
	number := a.Input(InputPullRequestNumber)
	expected := a.Input(InputExpectedHeadSHA)
	event := strings.TrimSpace(getenv("GITHUB_EVENT_NAME"))
	in := Inputs{Scoped: event == "pull_request" || event == "pull_request_target" || number != "" || expected != ""}
	in.Request = Request{APIURL: apiURL, Repository: strings.TrimSpace(getenv("GITHUB_REPOSITORY")), Number: number, ExpectedSHA: expected, Token: token}
	if !in.Scoped {
		return in, nil
	}
	var problems []error
	if token == "" {
		problems = append(problems, &actionio.InputError{Input: InputGitHubToken, Code: actionio.CodeRequired, Message: "is required to verify the current pull request head"})
	}
	if !numberRE.MatchString(number) {
		problems = append(problems, &actionio.InputError{Input: InputPullRequestNumber, Code: actionio.CodePatternMismatch, Message: "must match " + numberRE.String()})
	}
	if !expectedRE.MatchString(expected) {
		problems = append(problems, &actionio.InputError{Input: InputExpectedHeadSHA, Code: actionio.CodePatternMismatch, Message: "must be a 40-character hexadecimal commit SHA"})
	}
	if !repositoryRE.MatchString(in.Request.Repository) {
		problems = append(problems, &actionio.InputError{Input: "GITHUB_REPOSITORY", Code: actionio.CodePatternMismatch, Message: "must be the calling OWNER/NAME"})
	}
	switch len(problems) {
	case 0:
		return in, nil
	case 1:
		return in, problems[0]
	}
	return in, errors.Join(problems...)
}

// APIURLOf is raw (an actionio.IO.APIURL value) trimmed, or the public
// default when empty.
func APIURLOf(raw string) string {
	if v := strings.TrimSpace(raw); v != "" {
		return v
	}
	return "https://api.github.com"
}
