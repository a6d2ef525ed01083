package sim

// Machine seeds (issue 26): several runner agents share one physical
// machine, and the lock config sets serializeBy "machine" once it asks for
// runner serialization (schema >= 3). The agents runner-0..runner-5 of the
// ordinary jobs are spread over one or two machines; every scenario runner
// (runner-q, runner-z, ...) is a machine of its own, so a scenario's
// quarantine is reclaimed by no sibling. A job's machine id reaches acquire
// through actionkit.Deps.MachineID, as the operating system's would.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// machineStream is the PCG stream of the machine seeds' choices, apart
// from the seed's main stream (every earlier seed's schedule stays).
const machineStream = 0x6d616368 // "mach"

// machineShare: one in machineShare of the seeds whose target schema is 3
// or later is a machine seed (Config.Machines forces or forbids it).
const machineShare = 3

// chooseMachines decides whether the seed serializes by machine, and over
// how many machines its agents run.
func (s *sim) chooseMachines(c Config) {
	if s.schema < 3 || c.Machines < 0 {
		return
	}
	r := rand.New(rand.NewPCG(s.seed, machineStream))
	if r.IntN(machineShare) != 0 && c.Machines == 0 {
		return
	}
	s.machines = 1 + r.IntN(2)
	s.sched = append(s.sched, fmt.Sprintf("serializeBy machine: agents runner-k on machine k mod %d", s.machines))
	s.event("machine-seed")
}

// serializeByKey is the config member a machine seed adds at level.
func (s *sim) serializeByKey(level int) string {
	if s.machines == 0 || level < 3 {
		return ""
	}
	return `,"serializeBy":"machine"`
}

// machineOf is the per-repository machine id (32 lowercase hex digits) of
// the machine runner runs on.
func (s *sim) machineOf(runner string) string {
	m := uint64(0)
	if k, err := strconv.Atoi(strings.TrimPrefix(runner, "runner-")); err == nil && strings.HasPrefix(runner, "runner-") {
		m = uint64(k%s.machines) + 1
	} else {
		for _, c := range runner {
			m = m*131 + uint64(c)
		}
		m |= 1 << 40 // never one of the shared machines
	}
	return fmt.Sprintf("%016x%016x", s.seed, m)
}

// machineID is the Deps.MachineID of job j (nil outside machine seeds:
// acquire would read this host's real id, which no config asks for).
func (s *sim) machineID(j *job) func(context.Context, int64) (string, error) {
	if s.machines == 0 {
		return nil
	}
	id := s.machineOf(j.runner)
	return func(context.Context, int64) (string, error) { return id, nil }
}

// countMachineEvents counts, in the committed history, the reclaims of a
// machine's quarantine by a sibling agent (another runner of the machine)
// and the versions where an agent waited while a sibling held the
// machine's seat, so the machine seeds can prove they reach both.
func (s *sim) countMachineEvents() {
	if s.machines == 0 {
		return
	}
	var prev *lockstate.State
	for _, v := range s.em.History(owner, lockRepo, stateBranch, statePath) {
		if v.Content == nil {
			prev = nil
			continue
		}
		cur, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: serverURL})
		if err != nil {
			prev = nil
			continue
		}
		if prev != nil {
			s.siblingReclaims(prev, cur)
		}
		busy := map[string]string{}
		for _, h := range cur.Holders {
			busy[h.MachineID] = h.RunnerID
		}
		for _, e := range cur.Queue {
			if r, ok := busy[e.MachineID]; ok && e.MachineID != "" && r != e.RunnerID {
				s.event("machine-sibling-waited")
				break
			}
		}
		prev = cur
	}
}

func (s *sim) siblingReclaims(prev, cur *lockstate.State) {
	kept := map[string]bool{}
	for _, r := range cur.Reservations {
		kept[r.ReservationID] = true
	}
	held := map[string]bool{}
	for _, h := range prev.Holders {
		held[h.HolderID] = true
	}
	for _, h := range cur.Holders {
		if held[h.HolderID] || h.MachineID == "" {
			continue
		}
		for _, r := range prev.Reservations {
			if r.State == lockstate.ReservationQuarantine && !kept[r.ReservationID] && r.MachineID == h.MachineID && r.RunnerID != h.RunnerID {
				s.event("machine-sibling-reclaim")
			}
		}
	}
}
