package recovery

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// This file is the only place in recovery that reads the environment: the
// settings of the lock-repository operations (recover, recover-incident
// and, through LockSettings, the reaper), each parsed by one function that
// appends its problems to a shared lockaction.Problems list.

// Defaults of the proof inputs: no proof is ever assumed.
const (
	// DefaultResourceSafe: operation=recover needs resource-safe=true.
	DefaultResourceSafe = false
	// DefaultPortalCleanupConfirmed: operation=recover-incident needs
	// portal-cleanup-confirmed=true.
	DefaultPortalCleanupConfirmed = false
)

// LockSettings are what the lock-repository operations need to open the
// lock: the target, validated to be the running repository, the
// state-writer App's credentials and the retry knobs.
type LockSettings struct {
	Target      lockaction.Target
	Credentials lockaction.AppCredentials
	Knobs       lockaction.Knobs
}

// ParseLockSettings validates the target (lock-name, lock-repository,
// state-branch, the caller policy and the runner URLs), requires the lock
// repository to be the running repository (rule lock-repository-only), and
// parses the state-writer App credentials (BUILD_LOCK_APP_ID,
// BUILD_LOCK_APP_PRIVATE_KEY) and the retry knobs, appending every problem
// to p.
func ParseLockSettings(getenv func(string) string, p *lockaction.Problems) LockSettings {
	var ls LockSettings
	before := p.Len()
	ls.Target = lockaction.ParseTargetSettings(getenv, p)
	if p.Len() == before {
		p.Add(RequireLockRepository(strings.TrimSpace(getenv("GITHUB_REPOSITORY")), ls.Target))
	}
	ls.Credentials = lockaction.ParseCredentials(getenv, lockaction.EnvAppID, lockaction.EnvAppPrivateKey, p)
	ls.Knobs = lockaction.ParseKnobs(getenv)
	return ls
}

// Budget is a run's request budget: its limit (input request-budget, else
// BUILD_LOCK_REQUEST_BUDGET, else the knob's default) and the warnings
// about ignored values, printed before the first request.
type Budget struct {
	Limit    int
	Warnings []string
}

// ParseBudget resolves knob's request budget.
func ParseBudget(getenv func(string) string, knob requestbudget.Knob) Budget {
	limit, warnings := knob.Resolve(lockaction.Inputs(getenv).Input(requestbudget.InputRequestBudget), getenv(requestbudget.EnvRequestBudget))
	return Budget{Limit: limit, Warnings: warnings}
}

// Settings are everything one operator recovery reads from its
// environment, parsed and validated before any request.
type Settings struct {
	// Operation is OperationRecover or OperationRecoverIncident.
	Operation string
	// Budget is the run's request budget.
	Budget Budget
	// ReservationID is the quarantine to recover (operation=recover).
	ReservationID string
	// IncidentID is the incident to recover, "" to bind the single active
	// one (operation=recover-incident).
	IncidentID string
	// Lock opens the lock.
	Lock LockSettings
}

// Masks are the secrets to mask before anything is printed.
func (s Settings) Masks() []string { return s.Lock.Credentials.Masks }

// ParseSettings reads the operation input (required), the request budget,
// the operation's proof inputs and the lock settings, appending every
// problem to p in the order the checks always ran.
func ParseSettings(getenv func(string) string, p *lockaction.Problems) Settings {
	in := lockaction.Inputs(getenv)
	var s Settings
	op, err := in.Required(InputOperation)
	p.Add(err)
	s.Operation = op
	s.Budget = ParseBudget(getenv, RequestBudget)
	switch op {
	case "":
	case OperationRecover:
		s.ReservationID = recoverInputs(getenv, p)
	case OperationRecoverIncident:
		s.IncidentID = incidentInputs(getenv, p)
	default:
		p.Add(&lockaction.RefusalError{Rule: RuleOperation, Message: fmt.Sprintf(
			"operation must be %s or %s for operator recovery", OperationRecover, OperationRecoverIncident)})
	}
	s.Lock = ParseLockSettings(getenv, p)
	return s
}

// LoadSettings is ParseSettings returning one *lockaction.SettingsError
// listing every problem (its reason code is the first problem's).
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p lockaction.Problems
	s := ParseSettings(getenv, &p)
	return s, p.Err()
}

// recoverInputs validates the recover proof.
func recoverInputs(getenv func(string) string, p *lockaction.Problems) string {
	in := lockaction.Inputs(getenv)
	safe, err := in.Bool(InputResourceSafe, DefaultResourceSafe)
	p.Add(err)
	id := in.Input(InputReservationID)
	switch {
	case id == "":
		p.Add(&lockaction.RefusalError{Rule: RuleReservationIDRequired, Message: "operation=recover requires the exact reservation-id of the quarantine to recover"})
	case strings.ContainsAny(id, "\r\n"):
		p.Add(&lockaction.RefusalError{Rule: RuleReservationIDLineBreaks, Message: "reservation-id must not contain a line break"})
	}
	if err == nil && !safe {
		p.Add(&lockaction.RefusalError{Rule: RuleResourceSafeRequired, Message: "operation=recover requires resource-safe=true confirmation that the external resource was returned (Unity portal cleanup confirmed)"})
	}
	return id
}

// incidentInputs validates the recover-incident proof and the optional
// incident-id.
func incidentInputs(getenv func(string) string, p *lockaction.Problems) string {
	in := lockaction.Inputs(getenv)
	confirmed, err := in.Bool(InputPortalCleanupConfirmed, DefaultPortalCleanupConfirmed)
	p.Add(err)
	id := in.Input(InputIncidentID)
	if id != "" && !incidentIDRE.MatchString(id) {
		p.Add(&lockaction.RefusalError{Rule: RuleIncidentIDPattern, Message: "incident-id must be incident-<24 lowercase hex> as reported by the incident alert, or empty to bind the single active incident"})
	}
	if err == nil && !confirmed {
		p.Add(&lockaction.RefusalError{Rule: RulePortalCleanupConfirmed, Message: "operation=recover-incident requires portal-cleanup-confirmed=true proof that every Unity portal activation was reconciled"})
	}
	return id
}

// errNoEnvironment is WithDefaults' refusal of a missing edge.
var errNoEnvironment = errors.New("recover: Deps.Getenv and Deps.Stdout are required")
