//go:build linux || darwin

package filestore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// child is one helper process of the process test.
type child struct {
	id     string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	state  string // waiting, holding, releasing, killed, exited
	killed bool
	err    error
}

type childEvent struct {
	c    *child
	line string // "" = exited
}

// TestConcurrentProcessesWithRandomKills runs dozens of real processes of
// this test binary against one directory, K slots: each joins, waits FIFO,
// holds until the test tells it to release; the test SIGKILLs random ones
// while they wait or hold. Every state any process read under the
// exclusive lock (which is every state ever committed) is checked: never
// more than K holders; among the processes never killed, admission follows
// queue order; every survivor was admitted and released, and after a
// reclaim nothing is left. MACHINEQUEUE_PROCS (default 24) and
// MACHINEQUEUE_SEED scale and replay it.
func TestConcurrentProcessesWithRandomKills(t *testing.T) {
	t.Parallel()
	procs := envInt(t, "MACHINEQUEUE_PROCS", 24)
	seed := uint64(envInt(t, "MACHINEQUEUE_SEED", int(time.Now().UnixNano()%1_000_000)))
	const k = 2
	t.Logf("procs=%d K=%d seed=%d (MACHINEQUEUE_SEED=%d replays the kill schedule)", procs, k, seed, seed)
	rng := rand.New(rand.NewPCG(seed, 26))
	dir := t.TempDir()
	journal := filepath.Join(t.TempDir(), "journal")
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(procs)*5*time.Second)
	defer cancel()

	events := make(chan childEvent, procs*4)
	children := make([]*child, procs)
	for i := range children {
		c := &child{id: fmt.Sprintf("job-%03d", i), state: "waiting"}
		c.cmd = exec.Command(os.Args[0], "-test.run=^$")
		c.cmd.Env = append(os.Environ(), "MACHINEQUEUE_HELPER=job", "MACHINEQUEUE_DIR="+dir, "MACHINEQUEUE_K="+strconv.Itoa(k),
			"MACHINEQUEUE_ID="+c.id, "MACHINEQUEUE_POLL=2ms", "MACHINEQUEUE_JOURNAL="+journal)
		var err error
		c.stdin, err = c.cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := c.cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		c.cmd.Stderr = &stderr
		require.NoError(t, c.cmd.Start())
		children[i] = c
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				events <- childEvent{c, sc.Text()}
			}
			c.err = c.cmd.Wait()
			if stderr.Len() > 0 {
				c.err = fmt.Errorf("%v: %s", c.err, stderr.String())
			}
			events <- childEvent{c, ""}
		}()
	}

	kill := func(c *child) {
		if !c.killed && c.state != "exited" {
			c.killed = true
			_ = c.cmd.Process.Kill()
		}
	}
	pick := func(state string) *child {
		var in []*child
		for _, c := range children {
			if c.state == state && !c.killed {
				in = append(in, c)
			}
		}
		if len(in) == 0 {
			return nil
		}
		return in[rng.IntN(len(in))]
	}
	admissions, kills := 0, 0
	for running := procs; running > 0; {
		var ev childEvent
		select {
		case ev = <-events:
		case <-ctx.Done():
			for _, c := range children {
				kill(c)
			}
			t.Fatalf("the queue stopped making progress: %d processes still running", running)
		}
		switch {
		case ev.line == "":
			ev.c.state = "exited"
			running--
		case strings.HasPrefix(ev.line, "admitted "):
			ev.c.state = "holding"
			admissions++
		}
		// Every event drives one step of the schedule: a holder is
		// released (or killed), sometimes a waiter is killed. Each step
		// causes a later event, so the schedule never stalls.
		if h := pick("holding"); h != nil {
			if rng.IntN(100) < 15 {
				kill(h)
				kills++
			} else {
				h.state = "releasing"
				_ = h.stdin.Close()
			}
		}
		if rng.IntN(100) < 8 {
			if w := pick("waiting"); w != nil {
				kill(w)
				kills++
			}
		}
	}

	// The parent sweeps what the killed processes left (they are reaped:
	// their pids are free or reused by processes started later).
	parent, err := Open(dir, Options{Observe: func(state []byte) {
		f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			appendJournal(f, state)
			_ = f.Close()
		}
	}})
	require.NoError(t, err)
	_, err = parent.Reclaim(ctx)
	require.NoError(t, err)
	final, err := parent.Snapshot(ctx)
	require.NoError(t, err)
	assert.Empty(t, final.Holders, "nothing left holding")
	assert.Empty(t, final.Queue, "nothing left waiting")

	survivors := map[string]bool{}
	for _, c := range children {
		if !c.killed {
			survivors[c.id] = true
			assert.NoError(t, c.err, "%s was never killed and must have been admitted and released", c.id)
		}
	}
	states, torn := readJournal(t, journal)
	require.NotEmpty(t, states)
	assert.LessOrEqual(t, torn, kills, "only a process killed in the middle of a journal write tears a record")
	joined, admitted := map[string]int{}, map[string]int{}
	maxHolders := 0
	for i, st := range states {
		require.LessOrEqual(t, len(st.Holders), k, "state %d has more than K holders", i)
		maxHolders = max(maxHolders, len(st.Holders))
		for _, h := range st.Holders {
			if _, ok := joined[h.HolderID]; !ok {
				joined[h.HolderID] = i
			}
			if _, ok := admitted[h.HolderID]; !ok {
				admitted[h.HolderID] = i
			}
		}
		for _, w := range st.Queue {
			if _, ok := joined[w.HolderID]; !ok {
				joined[w.HolderID] = i
			}
		}
	}
	fifo := 0
	for a := range survivors {
		for b := range survivors {
			ja, oka := joined[a]
			jb, okb := joined[b]
			if a == b || !oka || !okb || ja >= jb {
				continue
			}
			fifo++
			assert.LessOrEqual(t, admitted[a], admitted[b], "%s joined before %s but was admitted after it", a, b)
		}
	}
	for id := range survivors {
		assert.Contains(t, admitted, id, "survivor %s never appears as a holder", id)
	}
	t.Logf("states checked=%d torn records=%d admissions reported=%d kills=%d survivors=%d FIFO pairs=%d max holders=%d",
		len(states), torn, admissions, kills, len(survivors), fifo, maxHolders)
	assert.Equal(t, k, maxHolders, "the schedule never filled the slots: the capacity check saw nothing")
	assert.Positive(t, kills)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}
