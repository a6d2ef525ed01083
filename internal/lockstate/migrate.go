package lockstate

import "fmt"

// migrate applies the config-triggered, one-way schema upgrades of spec §2.4
// to the working state s (expired cooldowns already pruned). observed is the
// schema read from storage. Each step needs a drained lock and the exact
// predecessor schema as observed, so at most one of the steps 2->3, 3->4,
// 4->5 or 5->6 can land in one call (2->4 is refused). Flags that are off
// never downgrade. It returns the schema migrated to, or 0.
//
// The 5 -> 6 step (fencedAdmission, this port's own schema) is gated like
// 4 -> 5 (observed schema exactly 5; no holders, queue entries or
// reservations after pruning expired cooldowns) and is deferred, without an
// error, while an account incident is active: Acquire then reports
// account-blocked and writes nothing, and the step lands on the first
// acquire after recovery once the recovery cooldown has expired. It starts
// the fencing counter at 0.
func migrate(s *State, cfg Config, observed int) (int, error) {
	migrated := 0
	lock := s.Lock
	if cfg.RunnerSerialization && s.SchemaVersion < 3 {
		if len(s.Holders) > 0 || len(s.Queue) > 0 {
			return 0, newError(CodeDrainRequired, fmt.Sprintf(
				"activate runner serialization on %s: schema %d has holders or queued requests; drain the lock before enabling it", lock, s.SchemaVersion))
		}
		s.SchemaVersion = 3
		migrated = 3
	}
	if cfg.ResourceLifecycle && s.SchemaVersion < 4 {
		if observed != 3 {
			return 0, newError(CodeMigrationStepRequired, fmt.Sprintf(
				"activate resource lifecycle on %s: the lock must first be drained on schema 3, observed schema %d; enable runnerSerialization alone until schema 3 is written", lock, observed))
		}
		if len(s.Holders) > 0 || len(s.Queue) > 0 {
			return 0, newError(CodeDrainRequired, fmt.Sprintf(
				"activate resource lifecycle on %s: schema 3 has holders or queued requests; drain the lock before enabling it", lock))
		}
		s.SchemaVersion = 4
		s.Reservations = []Reservation{}
		migrated = 4
	}
	if cfg.AccountHealth && s.SchemaVersion < 5 {
		if observed != 4 {
			return 0, newError(CodeMigrationStepRequired, fmt.Sprintf(
				"activate account health on %s: the lock must first be drained on schema 4, observed schema %d; enable resourceLifecycle without accountHealth until schema 4 is written", lock, observed))
		}
		if len(s.Holders) > 0 || len(s.Queue) > 0 || len(s.Reservations) > 0 {
			return 0, newError(CodeDrainRequired, fmt.Sprintf(
				"activate account health on %s: schema 4 has holders, queued requests or reservations; drain the lock before enabling it", lock))
		}
		s.SchemaVersion = 5
		s.ActiveIncident = nil
		migrated = 5
	}
	if cfg.FencedAdmission && s.SchemaVersion < FencedSchemaVersion && s.ActiveIncident == nil {
		if observed != 5 {
			return 0, newError(CodeMigrationStepRequired, fmt.Sprintf(
				"activate fenced admission on %s: the lock must first be drained on schema 5, observed schema %d; enable accountHealth without fencedAdmission until schema 5 is written", lock, observed))
		}
		if len(s.Holders) > 0 || len(s.Queue) > 0 || len(s.Reservations) > 0 {
			return 0, newError(CodeDrainRequired, fmt.Sprintf(
				"activate fenced admission on %s: schema 5 has holders, queued requests or reservations; drain the lock before enabling it", lock))
		}
		s.SchemaVersion = FencedSchemaVersion
		s.FencingToken = 0
		migrated = FencedSchemaVersion
	}
	return migrated, nil
}
