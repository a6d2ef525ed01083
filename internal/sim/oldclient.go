package sim

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// oldMaxSchema is the newest schema the simulated previous-release client
// (and the JavaScript reference) understands.
const oldMaxSchema = 5

// errOldClientRefuses is the old client failing closed on a newer schema.
var errOldClientRefuses = errors.New("sim: old client refuses a state schema newer than 5")

// runOldClient is a client of the previous schema generation sharing the
// lock (R-V2 mixed fleets): it knows schemas up to 5, ignores the config
// keys it does not know (fencedAdmission, maxOvertakes), and — like the
// reference — fails closed without writing when it reads schemaVersion 6.
// It uses the real store (compare-and-swap) and lockstate transitions with
// that cap; every write it makes is attributed to "old:<holderId>@<attempt>"
// and audited like any other.
func (s *sim) runOldClient(j *job) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(s.seed, uint64(j.idx)))
	c, err := ghclient.New(ctx, ghclient.Config{
		APIURL: apiURL + "/", AppID: writerAppID, PrivateKey: []byte(writerPEM),
		InstallationRepository: owner + "/" + lockRepo, TokenRepositories: []string{lockRepo},
		Transport: actorTransport{rec: s.rec, actor: j.actor(), proc: "old", drift: j.clk.drift, dead: &j.dead, base: s.linBase(j.linActor())},
		Clock:     j.clk, Jitter: r.Float64, Warn: func(string) {},
	})
	if err != nil {
		return
	}
	st, err := store.New(store.Options{Client: c, Owner: owner, Repo: lockRepo, Lock: lockName, ServerURL: serverURL, Clock: j.clk, Jitter: r.Float64})
	if err != nil {
		return
	}
	cfg, _, err := st.LoadConfig(ctx)
	if err != nil {
		// Like the reference's acquire, it gives up before queuing when
		// the config read fails: a clean end of its wait (seed 473).
		j.mu.Lock()
		j.waitEnded = time.Now()
		j.mu.Unlock()
		return
	}
	cfg.FencedAdmission, cfg.MaxOvertakes = false, 0
	// Nor does it know serializeBy (issue 26): it records no machine id.
	cfg.SerializeBy = ""
	id := lockstate.Identity{
		HolderID: j.holderID(), Repository: owner + "/" + j.repo, Workflow: "Unity", Job: j.name,
		RunID: itoa64(j.runID), RunAttempt: itoa(j.attempt), RunURL: serverURL + "/" + owner + "/" + j.repo + "/actions/runs/" + itoa64(j.runID),
		RunnerID: j.runner, QueuedAt: j.clk.Now(),
	}
	deadline := time.Now().Add(time.Duration(j.timeout) * time.Minute)
	admitted := false
	for !admitted && time.Now().Before(deadline) && !j.dead.Load() {
		var dec lockstate.AcquireDecision
		res, err := st.Update(ctx, "Acquire "+lockName, func(cur *lockstate.State) error {
			if cur.SchemaVersion > oldMaxSchema {
				return errOldClientRefuses
			}
			if err := oldMigrationRefusal(cur, cfg); err != nil {
				return err
			}
			next, d, err := lockstate.Acquire(cur, cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Duration(j.lease) * time.Minute}, j.clk.Now())
			if err != nil {
				return err
			}
			dec = d
			if d.Outcome == lockstate.OutcomeAccountBlocked {
				return errOldClientRefuses
			}
			if next.SchemaVersion > oldMaxSchema {
				return errOldClientRefuses
			}
			if !d.Changed {
				return store.ErrNoChange
			}
			dropUnknownKeys(next)
			*cur = *next
			return nil
		})
		if errors.Is(err, errOldClientRefuses) {
			s.event("old-client-refused")
			break
		}
		if c := lockstate.CodeOf(err); c == lockstate.CodeDrainRequired || c == lockstate.CodeMigrationStepRequired {
			// The reference fails the job on a pending upgrade; its own
			// entry is removed below, like every failed acquire of it.
			s.event("old-client-" + string(c))
			break
		}
		if err == nil && (dec.Outcome == lockstate.OutcomeAdmitted || dec.Outcome == lockstate.OutcomeAlreadyHolder) && (res.Written || !res.Ambiguous) {
			admitted = true
			break
		}
		time.Sleep(time.Duration(10+r.IntN(10)) * time.Second)
	}
	j.mu.Lock()
	j.waitEnded = time.Now()
	j.mu.Unlock()
	if admitted {
		s.event("old-client-admitted")
		time.Sleep(j.hold)
	}
	// Always clean up its own entries (release or timeout), fail closed on 6.
	for range 5 {
		if j.dead.Load() {
			return
		}
		_, err := st.Update(ctx, "Release "+lockName, func(cur *lockstate.State) error {
			if cur.SchemaVersion > oldMaxSchema {
				return errOldClientRefuses
			}
			// A release of the previous generation never carries a pending
			// upgrade: it runs with the flags the state already has.
			next, d, err := lockstate.Cleanup(cur, loweredTo(cfg, cur.SchemaVersion), lockstate.CleanupRequest{
				HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
				Report:        lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: "cleanup-confirmed"},
				ReservationID: "old-" + itoa(j.idx) + "-" + itoa(j.attempt), Identity: id, ServerURL: serverURL,
			}, j.clk.Now())
			if err != nil {
				return err
			}
			if !d.Changed {
				return store.ErrNoChange
			}
			dropUnknownKeys(next)
			*cur = *next
			return nil
		})
		if err == nil || errors.Is(err, errOldClientRefuses) {
			return
		}
		time.Sleep(5 * time.Second)
	}
}

// oldMigrationRefusal is the previous generation's (and the reference's)
// migration rule (reference-behavior.md §2.4): a config that asks for a
// schema above the state's is applied only one step at a time, from the
// exact predecessor schema as read, on a lock with no holders and no queue
// (and, for the step to 5, no reservation, expired or not); otherwise the
// acquire fails with drain-required or migration-step-required. It never
// knows fencedAdmission (cfg has it off).
func oldMigrationRefusal(cur *lockstate.State, cfg lockstate.Config) error {
	target := lockstate.TargetSchema(cfg)
	if target <= cur.SchemaVersion {
		return nil
	}
	if target > cur.SchemaVersion+1 {
		return &lockstate.Error{Code: lockstate.CodeMigrationStepRequired, Message: "sim old client: the lock must climb one schema at a time"}
	}
	if len(cur.Holders) > 0 || len(cur.Queue) > 0 || (target == 5 && len(cur.Reservations) > 0) {
		return &lockstate.Error{Code: lockstate.CodeDrainRequired, Message: "sim old client: drain the lock before enabling it"}
	}
	return nil
}

// loweredTo returns cfg with the schema flags above schema turned off.
func loweredTo(cfg lockstate.Config, schema int) lockstate.Config {
	cfg.RunnerSerialization = cfg.RunnerSerialization && schema >= 3
	cfg.ResourceLifecycle = cfg.ResourceLifecycle && schema >= 4
	cfg.AccountHealth = cfg.AccountHealth && schema >= 5
	cfg.FencedAdmission = cfg.FencedAdmission && schema >= lockstate.FencedSchemaVersion
	return cfg
}

// dropUnknownKeys removes what the previous generation does not know and
// so drops on every rewrite: the pendingRunnerId of schema-2 entries.
func dropUnknownKeys(s *lockstate.State) {
	for i := range s.Queue {
		s.Queue[i].PendingRunnerID = ""
	}
}

func itoa(n int) string     { return itoa64(int64(n)) }
func itoa64(n int64) string { return strconvFormat(n) }

func strconvFormat(n int64) string { return strconv.FormatInt(n, 10) }
