//go:build linux || darwin

package filestore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// crashScenario is one life of a victim process, driven step by step by
// the test (the parent, which is also a process of the machine queue).
type crashScenario struct {
	name string
	k    int
	// setup runs in the parent before the victim starts.
	setup func(t *testing.T, s *Store)
	// at is called at every step boundary of the victim (n counts the
	// boundaries with that op and name, from 1); it returns the command:
	// "go" or "cancel".
	at func(t *testing.T, s *Store, op, name string, n int) string
	// exit is the victim's last line when it runs to the end.
	exit string
}

const victimID = "victim"

var crashScenarios = []crashScenario{
	{
		// The slot is free: admitted in the first write, then released.
		name: "take-at-once-and-release", k: 1,
		exit: "released",
	},
	{
		// The parent holds the only slot: the victim queues, polls, is
		// handed the slot by the parent's release (made while the victim
		// is paused after its first poll), notices it, releases.
		name: "queue-handoff-release", k: 1,
		setup: func(t *testing.T, s *Store) {
			_, err := s.Take(context.Background(), Request{HolderID: "parent", Slots: 1, Owner: s.opts.Self})
			require.NoError(t, err)
		},
		at: func(t *testing.T, s *Store, op, name string, n int) string {
			if op == "poll" && name == StepUnlocked && n == 1 {
				_, err := s.Release(context.Background(), "parent", s.opts.Self)
				require.NoError(t, err)
			}
			return "go"
		},
		exit: "released",
	},
	{
		// The victim queues behind the parent and is cancelled after its
		// first poll: its entry is removed by the cancel write.
		name: "queue-cancel", k: 1,
		setup: func(t *testing.T, s *Store) {
			_, err := s.Take(context.Background(), Request{HolderID: "parent", Slots: 1, Owner: s.opts.Self})
			require.NoError(t, err)
		},
		at: func(_ *testing.T, _ *Store, op, name string, n int) string {
			if op == "poll" && name == StepUnlocked && n == 1 {
				return "cancel"
			}
			return "go"
		},
		exit: "error " + string(mq.CodeCancelled),
	},
}

// TestCrashAtEveryStep enumerates the step boundaries of take, poll,
// release and cancel: for each scenario it first runs the victim to the
// end to record its steps, then, for every boundary, runs it again in a
// fresh directory and SIGKILLs it there (while it holds the file lock, or
// between a temp file and its rename, ...). After each kill: queue.json
// is whole and is the state before the victim's last write or after it
// (never between), at most K hold; the parent's next write gets the lock
// (the OS dropped the dead writer's), removes left-over temp files and
// reclaims the victim; then a new job is admitted at once and the queue
// ends empty.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, sc := range crashScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			trace := runVictim(t, t.TempDir(), sc, -1)
			require.Contains(t, trace, "take "+StepRenamed, "the recording run never wrote")
			t.Logf("%d step boundaries: %s", len(trace), strings.Join(trace, ", "))
			for i := range trace {
				dir := t.TempDir()
				runVictim(t, dir, sc, i)
				checkRecovery(t, dir, sc, trace[:i+1])
			}
		})
	}
}

// runVictim runs one victim process in dir, answering its steps as the
// scenario says, and SIGKILLs it when it reaches step killAt (-1: never).
// It returns the steps passed (up to the kill).
func runVictim(t *testing.T, dir string, sc crashScenario, killAt int) []string {
	t.Helper()
	parent, err := Open(dir, Options{})
	require.NoError(t, err)
	if sc.setup != nil {
		sc.setup(t, parent)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MACHINEQUEUE_HELPER=victim", "MACHINEQUEUE_DIR="+dir,
		fmt.Sprintf("MACHINEQUEUE_K=%d", sc.k), "MACHINEQUEUE_ID="+victimID, "MACHINEQUEUE_POLL=2ms", "MACHINEQUEUE_JOURNAL=")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := false
	defer func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	say := func(s string) {
		_, err := io.WriteString(stdin, s+"\n")
		require.NoError(t, err)
	}
	var trace []string
	seen := map[string]int{}
	last := ""
	sc2 := bufio.NewScanner(stdout)
	for sc2.Scan() {
		last = sc2.Text()
		op, name, isStep := strings.Cut(strings.TrimPrefix(last, "step "), " ")
		switch {
		case strings.HasPrefix(last, "step ") && isStep:
			trace = append(trace, op+" "+name)
			if len(trace)-1 == killAt {
				require.NoError(t, cmd.Process.Kill())
				_ = cmd.Wait() // reaped: its pid is free, its lock dropped
				done = true
				return trace
			}
			seen[op+" "+name]++
			reply := "go"
			if sc.at != nil {
				reply = sc.at(t, parent, op, name, seen[op+" "+name])
			}
			say(reply)
		case strings.HasPrefix(last, "admitted "):
			say("go") // hold ends: release
		}
		if len(trace) > 200 {
			t.Fatalf("the victim never finished: %v", trace)
		}
	}
	err = cmd.Wait()
	done = true
	require.Equal(t, sc.exit, last, "the victim's last line (stderr: %s)", stderr.String())
	if sc.exit == "released" {
		require.NoError(t, err, stderr.String())
	}
	require.Less(t, killAt, 0, "the victim finished before step %d", killAt)
	return trace
}

// checkRecovery checks the directory a victim was killed in after the
// steps in prefix.
func checkRecovery(t *testing.T, dir string, sc crashScenario, prefix []string) {
	t.Helper()
	at := prefix[len(prefix)-1]
	// The victim's entry exists once a take's rename is done, and is gone
	// once a release's or cancel's rename is done.
	present := false
	for _, s := range prefix {
		switch s {
		case "take " + StepRenamed:
			present = true
		case "release " + StepRenamed, "cancel " + StepRenamed:
			present = false
		}
	}
	parent, err := Open(dir, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	st, err := parent.Snapshot(ctx)
	require.NoError(t, err, "killed at %s: queue.json must be whole", at)
	require.LessOrEqual(t, len(st.Holders), sc.k, "killed at %s", at)
	h, pos := mq.Find(st, victimID)
	assert.Equal(t, present, h != nil || pos > 0, "killed at %s: the victim's entry must be there exactly when its last write was renamed into place", at)

	_, err = parent.Reclaim(ctx)
	require.NoError(t, err, "killed at %s: the next writer must get the lock the dead writer held", at)
	left, err := filepath.Glob(filepath.Join(dir, tempPattern))
	require.NoError(t, err)
	assert.Empty(t, left, "killed at %s: the next writer removes left-over temp files", at)
	st, err = parent.Snapshot(ctx)
	require.NoError(t, err)
	h, pos = mq.Find(st, victimID)
	assert.False(t, h != nil || pos > 0, "killed at %s: the dead victim is reclaimed", at)

	_, err = parent.Release(ctx, "parent", parent.opts.Self)
	require.NoError(t, err)
	g, err := parent.Take(ctx, Request{HolderID: "after", Slots: sc.k, Owner: parent.opts.Self})
	require.NoError(t, err, "killed at %s", at)
	assert.Equal(t, 0, g.Position, "killed at %s: the next job is admitted at once", at)
	_, err = parent.Release(ctx, "after", parent.opts.Self)
	require.NoError(t, err)
	st, err = parent.Snapshot(ctx)
	require.NoError(t, err)
	assert.Empty(t, st.Holders, "killed at %s", at)
	assert.Empty(t, st.Queue, "killed at %s", at)
}
