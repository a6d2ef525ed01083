//go:build linux || darwin

package filestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// The test binary doubles as the helper process of the real-process tests:
// with MACHINEQUEUE_HELPER set it is one job on the machine.
//
//	job:    Take, print "admitted <slot>", wait for a line on stdin (or its
//	        end), Release, print "released", exit 0. Every state it reads
//	        under the exclusive lock is appended to MACHINEQUEUE_JOURNAL.
//	victim: the same, but it prints "step <op> <name>" at every step
//	        boundary and waits for a command line on stdin: "go" goes on,
//	        "cancel" cancels the Take's context first (the parent kills it
//	        instead while it waits there).
func TestMain(m *testing.M) {
	if mode := os.Getenv("MACHINEQUEUE_HELPER"); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	in := bufio.NewReader(os.Stdin)
	line := func() string {
		s, _ := in.ReadString('\n')
		return string(bytes.TrimSpace([]byte(s)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	poll, _ := time.ParseDuration(os.Getenv("MACHINEQUEUE_POLL"))
	opts := Options{Poll: poll, MaxPoll: 10 * poll, LockRetry: time.Millisecond}
	if path := os.Getenv("MACHINEQUEUE_JOURNAL"); path != "" {
		journal, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		opts.Observe = func(state []byte) { appendJournal(journal, state) }
	}
	if mode == "victim" {
		opts.Step = func(s Step) {
			fmt.Printf("step %s %s\n", s.Op, s.Name)
			if line() == "cancel" {
				cancel()
			}
		}
	}
	s, err := Open(os.Getenv("MACHINEQUEUE_DIR"), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	k, _ := strconv.Atoi(os.Getenv("MACHINEQUEUE_K"))
	id := os.Getenv("MACHINEQUEUE_ID")
	g, err := s.Take(ctx, Request{HolderID: id, Slots: k, Owner: s.opts.Self})
	if err != nil {
		fmt.Printf("error %s\n", mq.CodeOf(err))
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Printf("admitted %d\n", g.Slot)
	line()
	if _, err := s.Release(context.Background(), id, s.opts.Self); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("released")
	return 0
}

// appendJournal appends one state as one line, in one write. A newline
// goes first, so a record torn by a SIGKILL in the middle of the write
// never glues itself to the next one.
func appendJournal(f *os.File, state []byte) {
	var b bytes.Buffer
	b.WriteByte('\n')
	if state == nil {
		b.WriteString("null")
	} else if err := json.Compact(&b, state); err != nil {
		b.WriteString("invalid")
	}
	b.WriteByte('\n')
	_, _ = f.Write(b.Bytes())
}

// readJournal returns the states of a journal in order, and how many
// records were torn.
func readJournal(t *testing.T, path string) (states []*mq.State, torn int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range bytes.Split(data, []byte("\n")) {
		switch string(rec) {
		case "", "null":
			continue
		}
		st, err := mq.Decode(rec)
		if err != nil {
			if mq.CodeOf(err) == mq.CodeCorrupt && !json.Valid(rec) {
				torn++
				continue
			}
			t.Fatalf("journal holds a state the store wrote but cannot read back: %v\n%s", err, rec)
		}
		states = append(states, st)
	}
	return states, torn
}
