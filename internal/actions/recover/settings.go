package recover

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"

// Settings are everything one recover-build-lock run reads from its
// environment: the operation, the request budget, the operation's proof
// inputs and the lock (recovery.Settings, which the reaper's
// operation=recover and recover-incident share).
type Settings = recovery.Settings

// LoadSettings parses and validates every setting once, before any
// request, returning one *lockaction.SettingsError listing every problem
// (its reason code is the first problem's).
func LoadSettings(getenv func(string) string) (Settings, error) {
	return recovery.LoadSettings(getenv)
}
