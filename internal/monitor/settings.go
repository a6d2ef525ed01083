package monitor

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// Env is the workflow environment a monitor needs.
type Env struct {
	// APIURL is GITHUB_API_URL (https), default https://api.github.com.
	APIURL string
	// ServerURL is GITHUB_SERVER_URL (https), default https://github.com.
	ServerURL string
	// Repository is GITHUB_REPOSITORY ("owner/name"), possibly empty.
	Repository string
	// Token is GITHUB_TOKEN. It is never printed.
	Token string
}

// ReadEnv reads and validates the environment: https API and server URLs
// without credentials, and a non-empty GITHUB_TOKEN. Errors name variables,
// never values of secrets. It returns the first problem; LoadSettings
// lists them all.
func ReadEnv(getenv func(string) string) (Env, error) {
	var p edgesettings.Problems
	env := parseEnv(getenv, &p)
	if p.Len() > 0 {
		var e *edgesettings.Error
		if errors.As(p.Err(), &e) {
			return Env{}, e.Problems[0]
		}
	}
	return env, nil
}

// parseEnv reads the workflow environment, adding every problem to p
// (GITHUB_API_URL, GITHUB_SERVER_URL, then GITHUB_TOKEN).
func parseEnv(getenv func(string) string, p *edgesettings.Problems) Env {
	env := Env{
		APIURL:     strings.TrimSpace(getenv("GITHUB_API_URL")),
		ServerURL:  strings.TrimSpace(getenv("GITHUB_SERVER_URL")),
		Repository: strings.TrimSpace(getenv("GITHUB_REPOSITORY")),
		Token:      strings.TrimSpace(getenv("GITHUB_TOKEN")),
	}
	if env.APIURL == "" {
		env.APIURL = ghclient.DefaultAPIURL
	}
	if env.ServerURL == "" {
		env.ServerURL = DefaultServerURL
	}
	for _, v := range []struct{ name, value string }{{"GITHUB_API_URL", env.APIURL}, {"GITHUB_SERVER_URL", env.ServerURL}} {
		if err := requireHTTPS(v.value); err != nil {
			p.Add(fmt.Errorf("%w: %s %v", ErrUsage, v.name, err))
		}
	}
	if env.Token == "" {
		p.Add(fmt.Errorf("%w: GITHUB_TOKEN is required (the workflow token, env GITHUB_TOKEN: ${{ github.token }})", ErrUsage))
	}
	return env
}

func requireHTTPS(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must be an https URL without credentials, query or fragment")
	}
	return nil
}

// Flags are the flags every monitor accepts, as parsed.
type Flags struct {
	// Repo is --repo ("" = GITHUB_REPOSITORY).
	Repo string
	// RequestBudget is --request-budget (0 = unset).
	RequestBudget int
}

// Settings is what every monitor run reads from its environment and its
// common flags, read once by LoadSettings before any request.
type Settings struct {
	// Env is the validated workflow environment.
	Env Env
	// Owner and Repo name the lock repository (--repo, else
	// GITHUB_REPOSITORY).
	Owner, Repo string
	// BudgetLimit is the run's request budget: --request-budget, else
	// BUILD_LOCK_REQUEST_BUDGET, else DefaultRequestBudget.
	BudgetLimit int
	// BudgetWarnings say why BUILD_LOCK_REQUEST_BUDGET was ignored; Start
	// prints them.
	BudgetWarnings []string
}

// LoadSettings reads the workflow environment and resolves the common
// flags, adding every problem to p (all of them usage errors: exit code 2),
// in the order the monitors judged them one at a time before: the
// environment, the repository, the request budget. A --request-budget
// outside MinRequestBudget..MaxRequestBudget is a usage error; an invalid
// BUILD_LOCK_REQUEST_BUDGET only warns and keeps the default.
func LoadSettings(getenv func(string) string, f Flags, p *edgesettings.Problems) Settings {
	var s Settings
	s.Env = parseEnv(getenv, p)
	repo := f.Repo
	if repo == "" {
		repo = s.Env.Repository
	}
	owner, name, err := SplitRepository(repo)
	p.Add(err)
	s.Owner, s.Repo = owner, name
	switch limit := f.RequestBudget; {
	case limit != 0 && (limit < MinRequestBudget || limit > MaxRequestBudget):
		p.Add(fmt.Errorf("%w: --%s %d must be between %d and %d", ErrUsage, FlagRequestBudget, limit, MinRequestBudget, MaxRequestBudget))
	case limit != 0:
		s.BudgetLimit = limit
	default:
		s.BudgetLimit, s.BudgetWarnings = RequestBudget.Resolve("", getenv(requestbudget.EnvRequestBudget))
	}
	return s
}
