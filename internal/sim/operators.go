package sim

// The background actors: the scheduled reaper and the human operator who
// recovers quarantines and incidents with proof.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// reaperLoop runs the scheduled reaper every 5 virtual minutes; in the
// fault window a run is sometimes skipped or delayed (cron is best effort).
func (s *sim) reaperLoop(ctx context.Context) {
	tick := 5 * time.Minute
	for n := 0; ; n++ {
		if err := (clock.Real{}).Sleep(ctx, tick); err != nil {
			return
		}
		faulty := time.Since(s.t0) < s.window
		if s.aging && time.Since(s.t0) > s.window+s.live {
			// Aging phase: a slower cron keeps the run cheap.
			if n%6 != 0 {
				continue
			}
		}
		if faulty && s.intn(10) == 0 {
			s.event("reaper-skipped")
			continue
		}
		if faulty && s.intn(5) == 0 {
			s.event("reaper-delayed")
			if (clock.Real{}).Sleep(ctx, time.Duration(s.intn(240))*time.Second) != nil {
				return
			}
		}
		s.runReaper(ctx, map[string]string{"INPUT_OPERATION": "reap"})
	}
}

func (s *sim) reaperEnv(extra map[string]string) (map[string]string, string) {
	dir, err := os.MkdirTemp(tempRoot(), "sim-reap-")
	if err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
	env := map[string]string{
		"INPUT_LOCK_NAME":                   lockName,
		"BUILD_LOCK_ACTION_REPOSITORY":      owner + "/" + lockRepo,
		"GITHUB_REPOSITORY":                 owner + "/" + lockRepo,
		"GITHUB_REPOSITORY_ID":              strconv.Itoa(lockRepoID),
		"GITHUB_REPOSITORY_OWNER_ID":        strconv.Itoa(ownerID),
		"GITHUB_API_URL":                    apiURL,
		"GITHUB_SERVER_URL":                 serverURL,
		"GITHUB_OUTPUT":                     dir + "/output",
		"GITHUB_STEP_SUMMARY":               dir + "/summary",
		"BUILD_LOCK_APP_ID":                 strconv.Itoa(writerAppID),
		"BUILD_LOCK_APP_PRIVATE_KEY":        writerPEM,
		"BUILD_LOCK_READER_APP_ID":          strconv.Itoa(readerAppID),
		"BUILD_LOCK_READER_APP_PRIVATE_KEY": readerPEM,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env, dir
}

// runReaper runs one reaper (or recover) process.
func (s *sim) runReaper(ctx context.Context, extra map[string]string) error {
	env, dir := s.reaperEnv(extra)
	defer os.RemoveAll(dir)
	out := &syncBuffer{}
	actor := "reaper"
	if extra["INPUT_OPERATION"] != "reap" {
		actor = "recover"
	}
	r := rand.New(rand.NewPCG(s.seed, uint64(time.Since(s.t0))))
	la, call := opActor(env), s.lin.Now()
	err := reap.Run(context.WithoutCancel(ctx), reap.Deps{
		Getenv: func(k string) string { return env[k] }, Stdout: out,
		Transport: actorTransport{rec: s.rec, actor: actor, proc: fmt.Sprint(time.Since(s.t0)), base: s.linBase(la)},
		Jitter:    r.Float64,
		NewID:     func() string { return fmt.Sprintf("sim-res-%d", s.nextRes.Add(1)) },
	})
	sum, _ := os.ReadFile(dir + "/summary")
	outs, _ := os.ReadFile(dir + "/output")
	s.linRecovered(la, call, readFileCommands(dir+"/output"))
	s.jobsMu.Lock()
	s.reaperOut = append(s.reaperOut, out.String(), string(sum), string(outs))
	s.jobsMu.Unlock()
	s.event(actor + "-runs")
	return err
}

// operatorLoop is the human operator: every 10 minutes it recovers, with
// proof, each quarantine whose owning run the simulation knows is finished
// (and, in the liveness phase, every incident after checking the portal).
func (s *sim) operatorLoop(ctx context.Context) {
	for {
		if (clock.Real{}).Sleep(ctx, 10*time.Minute) != nil {
			return
		}
		st := s.currentState()
		if st == nil {
			continue
		}
		if st.ActiveIncident != nil && (time.Since(s.t0) > s.window || s.intn(3) == 0) {
			s.jobsMu.Lock()
			s.incidentsOK[st.ActiveIncident.IncidentID] = time.Now()
			s.jobsMu.Unlock()
			_ = s.runReaper(ctx, map[string]string{"INPUT_OPERATION": recovery.OperationRecoverIncident,
				"INPUT_INCIDENT_ID": st.ActiveIncident.IncidentID, "INPUT_PORTAL_CLEANUP_CONFIRMED": "true"})
			continue
		}
		for _, r := range st.Reservations {
			if r.State != lockstate.ReservationQuarantine {
				continue
			}
			runID, _ := strconv.ParseInt(r.RunID, 10, 64)
			att, _ := strconv.Atoi(r.RunAttempt)
			if !s.runFinished(runID, att, time.Now()) || s.aging {
				continue
			}
			s.jobsMu.Lock()
			s.recovered[r.ReservationID] = time.Now()
			s.jobsMu.Unlock()
			_ = s.runReaper(ctx, map[string]string{"INPUT_OPERATION": recovery.OperationRecover,
				"INPUT_RESERVATION_ID": r.ReservationID, "INPUT_RESOURCE_SAFE": "true"})
			break
		}
	}
}

// currentState decodes the newest committed state (nil when none).
func (s *sim) currentState() *lockstate.State {
	h := s.em.History(owner, lockRepo, stateBranch, statePath)
	if len(h) == 0 || h[len(h)-1].Content == nil {
		return nil
	}
	st, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: serverURL})
	if err != nil {
		return nil
	}
	return st
}
