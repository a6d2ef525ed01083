package enroll

import (
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
)

// Settings are everything audit-enrollment reads from its environment, read
// once by Main before any command runs (and before any request). A problem
// is kept with the value it concerns and reported by the commands that need
// it, all together: validate-registry needs no token or App.
type Settings struct {
	// Env is the workflow environment (GITHUB_API_URL, GITHUB_SERVER_URL,
	// GITHUB_REPOSITORY, GITHUB_TOKEN); EnvErr its problem.
	Env    monitor.Env
	EnvErr error
	// Repository is GITHUB_REPOSITORY (trimmed), validate-registry's
	// default organization.
	Repository string
	// RunID is GITHUB_RUN_ID (trimmed), which an artifact URL must name.
	RunID string
	// ArtifactURL is ENROLLMENT_ARTIFACT_URL, sync-issue's default.
	ArtifactURL string
	// Onboard are onboard's defaults: ENROLLMENT_REPOSITORY,
	// ENROLLMENT_DEFAULT_BRANCH, ENROLLMENT_FORK,
	// ENROLLMENT_ALLOW_WORKFLOW_DISPATCH and ENROLLMENT_EVIDENCE_URL.
	Onboard map[string]string
	// Reader are the reader App's credentials; ReaderErr their problem.
	Reader    lockaction.AppCredentials
	ReaderErr error
}

// onboardVars are the variables onboard falls back to.
var onboardVars = []string{"ENROLLMENT_REPOSITORY", "ENROLLMENT_DEFAULT_BRANCH", "ENROLLMENT_FORK", "ENROLLMENT_ALLOW_WORKFLOW_DISPATCH", "ENROLLMENT_EVIDENCE_URL"}

// LoadSettings reads every variable audit-enrollment uses.
func LoadSettings(getenv func(string) string) Settings {
	s := Settings{
		Repository:  strings.TrimSpace(getenv("GITHUB_REPOSITORY")),
		RunID:       strings.TrimSpace(getenv("GITHUB_RUN_ID")),
		ArtifactURL: strings.TrimSpace(getenv("ENROLLMENT_ARTIFACT_URL")),
		Onboard:     map[string]string{},
	}
	s.Env, s.EnvErr = monitor.ReadEnv(getenv)
	for _, name := range onboardVars {
		s.Onboard[name] = strings.TrimSpace(getenv(name))
	}
	var p lockaction.Problems
	s.Reader = lockaction.ParseCredentials(getenv, lockaction.EnvReaderAppID, lockaction.EnvReaderAppKey, &p)
	s.ReaderErr = p.First()
	return s
}
