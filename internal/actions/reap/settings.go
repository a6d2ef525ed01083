package reap

import (
	"errors"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// Settings are everything one reap-stale-locks run reads from its
// environment, parsed and validated once by LoadSettings before any
// request. Nothing below Run reads the environment.
type Settings struct {
	// Operation is OperationReap (also when the input is empty),
	// recovery.OperationRecover or recovery.OperationRecoverIncident.
	Operation string
	// Recover are the settings of a recover operation (Operation is not
	// OperationReap).
	Recover recovery.Settings
	// Budget is the run's request budget (RequestBudget).
	Budget recovery.Budget
	// Lock opens the lock with the state-writer App.
	Lock recovery.LockSettings
	// Reader are the reader App's credentials (actions: read, metadata:
	// read on the consumer repositories); there is deliberately no
	// fallback to the writer App.
	Reader lockaction.AppCredentials
}

// Masks are the secrets to mask before anything is printed.
func (s Settings) Masks() []string {
	return append(append(append([]string(nil), s.Lock.Credentials.Masks...), s.Reader.Masks...), s.Recover.Masks()...)
}

// LoadSettings parses the operation and, for operation=reap, the request
// budget, the lock (target, lock repository only, writer App credentials,
// retry knobs) and the reader App credentials; operation=recover and
// recover-incident are recovery's settings. On bad input it returns one
// *lockaction.SettingsError listing every problem (its reason code is the
// first problem's).
func LoadSettings(getenv func(string) string) (Settings, error) {
	var s Settings
	var p lockaction.Problems
	s.Operation = lockaction.Inputs(getenv).Input(recovery.InputOperation)
	switch s.Operation {
	case "", OperationReap:
		s.Operation = OperationReap
	case recovery.OperationRecover, recovery.OperationRecoverIncident:
		s.Recover = recovery.ParseSettings(getenv, &p)
		return s, p.Err()
	default:
		p.Add(&lockaction.RefusalError{Rule: recovery.RuleOperation, Message: fmt.Sprintf(
			"operation must be %s, %s or %s", OperationReap, recovery.OperationRecover, recovery.OperationRecoverIncident)})
		return s, p.Err()
	}
	s.Budget = recovery.ParseBudget(getenv, RequestBudget)
	s.Lock = recovery.ParseLockSettings(getenv, &p)
	var readers lockaction.Problems
	s.Reader = lockaction.ParseCredentials(getenv, lockaction.EnvReaderAppID, lockaction.EnvReaderAppKey, &readers)
	if err := readers.First(); err != nil {
		var re *lockaction.RefusalError
		switch {
		case errors.As(err, &re) && re.Rule != "legacy-token":
			p.Add(&lockaction.RefusalError{Rule: RuleReaderCredentials, Message: fmt.Sprintf(
				"the scheduled reaper needs the reader App (%s and %s, actions: read and metadata: read on the consumer repositories): %s",
				lockaction.EnvReaderAppID, lockaction.EnvReaderAppKey, re.Message)})
		case re != nil && p.Len() > 0:
			// legacy-token: the writer credentials reported it already.
		default:
			p.Add(err)
		}
	}
	return s, p.Err()
}
