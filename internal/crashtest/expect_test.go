package crashtest

import (
	"context"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// Commit messages only the reaper or an operator recovery writes.
var operatorMessages = []string{"Reap ", "Auto-recover ", "Prune expired cooldowns", "Recover ", "Prune recovered"}

// checkStep holds the per-action, per-fault expectations of the step
// itself (before any later reaper or operator run).
func checkStep(ct *caseT, w *world, sc scenario, v *victim, o *outcome) {
	vs := w.versions()
	atFire := -1 // a brand-new lock has no version before the first write
	for i, ver := range vs {
		if !ver.Time.After(o.fireAt) {
			atFire = i
		}
	}
	// SIGKILL: nothing of the victim may change after the kill.
	if o.id.f == faultSIGKILL {
		if v.holderID != "" {
			want := ""
			if atFire >= 0 {
				s0, _ := decodeState(vs[atFire].Content)
				want = presence(s0, v.holderID)
			}
			for i := atFire + 1; i < len(vs); i++ {
				s, err := decodeState(vs[i].Content)
				if err == nil && presence(s, v.holderID) != want {
					ct.violate("after SIGKILL version %d (%s) changed %s from %q to %q: something acted for the dead process",
						i, vs[i].Message, v.holderID, want, presence(s, v.holderID))
				}
			}
		} else {
			for i := atFire + 1; i < len(vs); i++ {
				for _, m := range operatorMessages {
					if strings.HasPrefix(vs[i].Message, m) {
						ct.violate("after SIGKILL version %d (%s) was written by the dead %s", i, vs[i].Message, sc.name)
					}
				}
			}
		}
		return
	}
	final := w.stateAt(o.retAt)
	switch sc.act() {
	case "acquire":
		if msg := checkAcquiredClaim(w, v.holderID, o.outputs); msg != "" {
			ct.violate("%s", msg)
		}
		if o.id.f == faultSIGINT && o.err != nil {
			if o.outputs["acquired"] == "true" {
				ct.violate("a cancelled acquire reported acquired=true")
			}
			if p := presence(final, v.holderID); p != "" {
				ct.violate("after SIGINT the victim is still a %s entry when the step returned (cleanup output: %q)", p, cleanupLines(o.stdout))
			}
			if rs := reservationsOf(final, v.holderID); len(rs) > 0 {
				ct.violate("after SIGINT the retraction left reservation %+v (a pre-activation retraction leaves none)", rs)
			}
		}
		if o.id.f == faultSIGINT && o.err == nil && o.outputs["acquired"] != "true" {
			ct.violate("acquire returned success without acquired=true (outputs %v)", o.outputs)
		}
	case "release":
		if o.outputs["cleanup-result"] == string(lockstate.ResultLockReleaseUnreachable) {
			for _, r := range o.requests {
				if r.Label == putLabel && r.Status >= 200 && r.Status < 300 {
					ct.violate("lock-release-unreachable although the release write was acknowledged (%d)", r.Status)
				}
			}
		}
		if o.err == nil {
			if p := presence(final, v.holderID); p != "" {
				ct.violate("release succeeded (%s) but the victim is still a %s entry", o.outputs["cleanup-result"], p)
			}
			if !shaInHistory(w, o.outputs["state-sha"]) {
				ct.violate("release reported state-sha %q, which is no committed version", o.outputs["state-sha"])
			}
		}
		if o.id.f == faultSIGINT && o.err != nil {
			ct.violate("release did not complete within its SIGINT window: %v", o.err)
		}
	case "post-cleanup":
		if o.err != nil {
			ct.violate("the post step failed: %v", o.err)
		}
		if p := presence(final, v.holderID); p != "" && !strings.Contains(o.stdout, "Build-lock post cleanup failed") {
			ct.violate("the post step left the victim as a %s entry without a warning", p)
		}
	case "recover-quarantine", "recover-incident":
		if o.err == nil && o.outputs[recovery.OutputReaped] != "true" {
			ct.violate("recovery succeeded without reaped=true (%v)", o.outputs)
		}
		if o.err == nil && sc.act() == "recover-incident" && final.ActiveIncident != nil {
			ct.violate("recover-incident succeeded but incident %s is still active", final.ActiveIncident.IncidentID)
		}
	}
}

const putLabel = "PUT /repos/" + actiontest.Owner + "/" + actiontest.LockRepo + "/contents/" + actiontest.StatePath

func shaInHistory(w *world, sha string) bool {
	for _, v := range w.versions() {
		if v.BlobSHA == sha {
			return true
		}
	}
	return false
}

func cleanupLines(stdout string) string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "cleanup") || strings.Contains(l, "Cleanup") {
			out = append(out, l)
		}
	}
	return strings.Join(out, " | ")
}

// recoverAndCheckLiveness finishes the story the way the organization
// would: the victim's workflow runs its always() release when the acquire
// reported a held seat, every run ends, the scheduled reaper runs, an
// operator recovers an incident that is still active, the quarantine grace
// passes and the reaper runs again. Then the victim must be gone, no
// quarantine may remain, and a fresh job must be admitted: the seat came
// back.
func recoverAndCheckLiveness(ct *caseT, w *world, sc scenario, v *victim, o *outcome, rivals []*actiontest.Job) {
	ctx := context.Background()
	if v.job != nil {
		if sc.act() == "acquire" && o.id.f != faultSIGKILL && o.outputs["acquired"] == "true" {
			if err := w.release(ctx, v.job, nil, "resource-cleanup-status", "confirmed"); err != nil {
				ct.violate("the victim's always() release failed: %v", err)
			}
		}
		conclusion := map[fault]string{faultSIGKILL: "failure", faultSIGINT: "cancelled", faultStall: "failure"}[o.id.f]
		w.finish(v.job, conclusion)
	}
	for _, r := range rivals {
		w.finish(r, "success")
	}
	if err := w.reap(ctx); err != nil {
		ct.violate("the reaper after the step failed: %v", err)
	}
	if s := w.State(); s.ActiveIncident != nil {
		env := w.opEnv("operation", recovery.OperationRecoverIncident, "incident-id", s.ActiveIncident.IncidentID, "portal-cleanup-confirmed", "true")
		if err := recoveraction.Run(ctx, w.opDeps(env, &actiontest.SyncBuffer{}, nil)); err != nil {
			ct.violate("operator recover-incident failed: %v", err)
		}
	}
	time.Sleep(241 * time.Minute)
	if err := w.reap(ctx); err != nil {
		ct.violate("the reaper after the quarantine grace failed: %v", err)
	}
	time.Sleep(31 * time.Second)
	s := w.State()
	if v.holderID != "" {
		if p := presence(s, v.holderID); p != "" {
			ct.violate("after the reaper the victim is still a %s entry", p)
		}
	}
	for _, r := range s.Reservations {
		if r.State == lockstate.ReservationQuarantine {
			ct.violate("quarantine %s of %s survived the reaper after its run ended and the grace passed", r.ReservationID, r.HolderID)
		}
	}
	fresh := w.job("fresh", "runner-z")
	if err := w.acquire(ctx, fresh); err != nil || fresh.Outputs()["acquired"] != "true" {
		ct.violate("the seat did not come back: a fresh acquire got %v (%s); state: %d holders, %d queued, %d reservations",
			err, fresh.Outputs()["admission-result"], len(s.Holders), len(s.Queue), len(s.Reservations))
		return
	}
	if err := w.release(ctx, fresh, nil, "resource-cleanup-status", "confirmed"); err != nil {
		ct.violate("the fresh job's release failed: %v", err)
	}
}
