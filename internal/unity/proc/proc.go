package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// After returns a channel that receives once d has elapsed; time.After in
// production, a hand-fired fake in tests.
type After func(d time.Duration) <-chan time.Time

// Spec is one command to run.
type Spec struct {
	// Path is the absolute path of the executable; it is never looked up in
	// PATH.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env is the complete environment of the child ("NAME=value"); nil means
	// an empty environment, never the parent's.
	Env []string
	// Dir is the working directory ("" = the caller's).
	Dir string
	// Timeout starts the termination of the tree.
	Timeout time.Duration
	// Grace is how long the tree may take to end after termination before
	// it is killed, and the drain window: how long, after the child exited
	// on its own, the processes it started may keep writing to the output
	// before the tree is ended.
	Grace time.Duration
	// OutputCap bounds the combined output kept, in bytes; one byte more
	// terminates the tree.
	OutputCap int64
}

// Result is what happened.
type Result struct {
	// Output is the combined stdout and stderr, at most Spec.OutputCap bytes.
	Output []byte
	// Overflow is true when the command wrote more than OutputCap bytes; the
	// tree was terminated.
	Overflow bool
	// TimedOut is true when the timeout fired; the tree was terminated.
	TimedOut bool
	// Cancelled is true when ctx ended first; the tree was killed.
	Cancelled bool
	// Completed is true when the child exited on its own or within the grace
	// after termination. False means it had to be killed (or a cancelled run).
	Completed bool
	// ExitCode is the child's exit status when Completed and not Signaled, as
	// a signed 32-bit value (Windows NTSTATUS codes are negative, as Node
	// reports them); -1 otherwise.
	ExitCode int64
	// Signaled is true when the child ended by a signal (Unix).
	Signaled bool
	// OutputComplete is true when the output pipe reached end of file: every
	// process holding it was gone (a process ended at the end of the drain
	// window included: what it wrote before is all there). With Overflow,
	// or after a cancellation, it is false.
	OutputComplete bool
	// HeldOpen is true when, after the child exited on its own, a process
	// it started still held the output when the drain window (or the
	// timeout) ended, and was ended with the tree.
	HeldOpen bool
}

// ErrStart wraps every failure to start the command or to place it under
// tree control; a command that could not be controlled is killed first.
var ErrStart = errors.New("proc: start command")

// Run runs spec. It returns an error only when the command could not be
// started under tree control; every other outcome is in the Result. after
// nil means time.After.
func Run(ctx context.Context, spec Spec, after After) (Result, error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w: nil context", ErrStart)
	}
	if after == nil {
		after = time.After
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("%w: output pipe: %v", ErrStart, err)
	}
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	cmd := &exec.Cmd{Path: spec.Path, Args: append([]string{spec.Path}, spec.Args...), Env: env, Dir: spec.Dir, Stdout: pw, Stderr: pw}
	t, err := newTree()
	if err != nil {
		pr.Close()
		pw.Close()
		return Result{}, fmt.Errorf("%w: %v", ErrStart, err)
	}
	defer t.close()
	t.prepare(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return Result{}, fmt.Errorf("%w: %v", ErrStart, err)
	}
	pw.Close()
	if err := t.started(cmd.Process); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pr.Close()
		return Result{}, fmt.Errorf("%w: place the command under process-tree control: %v", ErrStart, err)
	}
	c := &capture{limit: spec.OutputCap, overflow: make(chan struct{}), eof: make(chan struct{})}
	go c.read(pr)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState
	}()

	res := Result{ExitCode: -1}
	timeout := after(spec.Timeout)
	var grace <-chan time.Time
	terminate := func() {
		if grace == nil {
			t.terminate()
			grace = after(spec.Grace)
		}
	}
	var state *os.ProcessState
	overflow := c.overflow
loop:
	for {
		select {
		case state = <-exited:
			res.Completed = !res.Cancelled
			break loop
		case <-overflow:
			overflow = nil
			res.Overflow = true
			terminate()
		case <-timeout:
			timeout = nil
			res.TimedOut = true
			terminate()
		case <-grace:
			grace = nil
			t.kill()
			state = <-exited
			break loop
		case <-ctx.Done():
			res.Cancelled = true
			t.kill()
			state = <-exited
			break loop
		}
	}
	// The child exited on its own. A process it started may still hold
	// the output and write to it: on Windows the pipe's handles are
	// inheritable, so a process the editor starts (its licensing client)
	// inherits them and can outlive it. Keep capturing until end of file,
	// for at most the drain window (Grace, cut short by the timeout).
	cut := false
	if res.Completed && grace == nil {
		drain := after(spec.Grace)
	drainLoop:
		for {
			select {
			case <-c.eof:
				break drainLoop
			case <-overflow:
				overflow = nil
				res.Overflow = true
				break drainLoop
			case <-timeout:
				timeout = nil
				res.HeldOpen = true
				break drainLoop
			case <-drain:
				res.HeldOpen = true
				break drainLoop
			case <-ctx.Done():
				res.Cancelled, cut = true, true
				break drainLoop
			}
		}
	}
	// End whatever is left in the tree, then drain the pipe, bounded by the
	// grace (a descendant outside the tree may hold it).
	t.kill()
	select {
	case <-c.eof:
		res.OutputComplete = !cut
	case <-after(spec.Grace):
		pr.Close()
		<-c.eof
	}
	pr.Close()
	res.Overflow = res.Overflow || c.over
	res.OutputComplete = res.OutputComplete && !c.over
	res.Output = c.buf.Bytes()
	if res.Completed && state != nil {
		if code, signaled := exitStatus(state); signaled {
			res.Signaled = true
		} else {
			res.ExitCode = code
		}
	}
	return res, nil
}

// exitStatus returns the exit code as a signed 32-bit value, or
// signaled=true.
func exitStatus(s *os.ProcessState) (int64, bool) {
	code := s.ExitCode()
	if code < 0 {
		return -1, true
	}
	return int64(int32(uint32(code))), false
}

// capture keeps at most limit bytes of r and signals overflow once.
type capture struct {
	limit    int64
	buf      bytes.Buffer
	over     bool
	once     sync.Once
	overflow chan struct{}
	eof      chan struct{}
}

func (c *capture) read(r io.Reader) {
	defer close(c.eof)
	b := make([]byte, 64<<10)
	for {
		n, err := r.Read(b)
		if n > 0 {
			room := c.limit - int64(c.buf.Len())
			if int64(n) <= room {
				c.buf.Write(b[:n])
			} else {
				if room > 0 {
					c.buf.Write(b[:room])
				}
				c.over = true
				c.once.Do(func() { close(c.overflow) })
			}
		}
		if err != nil {
			return
		}
	}
}
