package fakeeditor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Lines the fake prints (the exact positive lines of facts §3).
const (
	EntitlementLine = "[Licensing::Module] Successfully returned the entitlement license"
	ULFLinePrefix   = "[Licensing::Client] Successfully returned ULF license with serial number: "
	Serial          = "SC-F4KE-SER1-AL00-0042"
	FloodBytes      = 30 << 20
	// ReadyFIFO is the name, under $TEMP, of the FIFO hang modes report on.
	ReadyFIFO = "fake-editor.ready"
	// InvocationFile is the name, under $TEMP, of the recorded invocation.
	InvocationFile = "fake-editor-invocation.json"
	grandchildFlag = "-fake-editor-grandchild"
	lateChildFlag  = "-fake-editor-late-child"
	// LateChildLine is what the late-child mode's grandchild prints once
	// the editor has exited.
	LateChildLine = "[Licensing::Client] (fake licensing client) still writing after the editor exited"
)

// Invocation is what one run of the fake saw.
type Invocation struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

// Dispatch runs the fake and exits when the process was started as the
// editor (its arguments hold -returnlicense) or as a fake grandchild; it
// returns otherwise, so TestMain continues with m.Run.
func Dispatch() {
	args := os.Args[1:]
	for _, a := range args {
		switch a {
		case "-returnlicense":
			os.Exit(Main(args))
		case grandchildFlag:
			os.Exit(grandchild(args))
		case lateChildFlag:
			os.Exit(lateChild())
		}
	}
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// Main is the fake editor; it returns the exit code.
func Main(args []string) int {
	user, password := argAfter(args, "-username"), argAfter(args, "-password")
	mode, _, _ := strings.Cut(user, "@")
	record(args)
	out := os.Stdout
	positive := func(eol string) {
		fmt.Fprint(out, "Unity Editor (fake) batch mode"+eol)
		fmt.Fprint(out, EntitlementLine+eol)
		fmt.Fprint(out, ULFLinePrefix+Serial+eol)
	}
	switch {
	case mode == "clean":
		positive("\n")
	case mode == "clean-crlf":
		positive("\r\n")
	case mode == "secret":
		fmt.Fprintf(out, "Logging in as %s with password %s\n", user, password)
		fmt.Fprintf(out, "Activation serial %s in use\n", strings.ToLower(Serial))
		positive("\n")
	case mode == "flood":
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for n := 0; n < FloodBytes; n += len(line) {
			if _, err := out.Write(line); err != nil {
				return 2
			}
		}
	case mode == "hang" || mode == "hang-hard":
		hard := mode == "hang-hard"
		if hard {
			signal.Ignore(syscall.SIGTERM)
		}
		pid, err := startGrandchild(hard)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake editor:", err)
			return 3
		}
		fmt.Fprintln(out, "waiting for the licensing client")
		ready(fmt.Sprintf("%d %d\n", os.Getpid(), pid))
		sleepForever()
	case mode == "leave-grandchild":
		positive("\n")
		pid, err := startGrandchild(false)
		if err != nil {
			return 3
		}
		fmt.Fprintf(out, "licensing client pid %d\n", pid)
	case mode == "late-child":
		fmt.Fprint(out, "Unity Editor (fake) batch mode\n"+EntitlementLine+"\n")
		alive, err := startLateChild()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake editor:", err)
			return 3
		}
		// The write end stays open (and out of the finalizer's reach) until
		// the editor exits.
		defer runtime.KeepAlive(alive)
	case mode == "bom":
		fmt.Fprint(out, "\ufeff")
		positive("\n")
	case mode == "blocked":
		fmt.Fprintln(out, "[Licensing::Client] Error: Code 20111 while returning: the account has reached its activation limit")
		return 1
	case mode == "handoff":
		fmt.Fprintln(out, "[Licensing::Module] Error: return failed with status 400006")
		fmt.Fprintln(out, ULFLinePrefix+Serial)
	case mode == "ulf-skipped":
		fmt.Fprintln(out, EntitlementLine)
		fmt.Fprintln(out, "[Licensing::Module] Error: Serial number unavailable for ULF return; skipping operation")
	case strings.HasPrefix(mode, "exit-"):
		code, err := strconv.Atoi(strings.TrimPrefix(mode, "exit-"))
		if err != nil {
			return 2
		}
		positive("\n")
		return code
	case mode == "silent":
	default:
		fmt.Fprintln(os.Stderr, "fake editor: unknown mode")
		return 2
	}
	return 0
}

func startGrandchild(hard bool) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, grandchildFlag, strconv.FormatBool(hard))
	cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdout, os.Stderr, os.Environ()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

// startLateChild starts a grandchild that inherits the output and the read
// end of a pipe whose write end only the editor holds: the grandchild's
// read ends when the editor has exited, so it writes after the editor is
// gone, with no sleep and no race. It returns the write end, which the
// caller keeps reachable until the editor exits.
func startLateChild() (*os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, lateChildFlag)
	cmd.Stdout, cmd.Stderr, cmd.Env, cmd.ExtraFiles = os.Stdout, os.Stderr, os.Environ(), []*os.File{r}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	_ = r.Close()
	return w, nil
}

// lateChild waits for the editor to exit (end of file on fd 3), then prints
// the ULF-returned line and a line of its own.
func lateChild() int {
	_, _ = io.Copy(io.Discard, os.NewFile(3, "editor-alive"))
	fmt.Fprintln(os.Stdout, ULFLinePrefix+Serial)
	fmt.Fprintln(os.Stdout, LateChildLine)
	return 0
}

func grandchild(args []string) int {
	if argAfter(args, grandchildFlag) == "true" {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stdout, "licensing client (fake) running")
	sleepForever()
	return 0
}

// sleepForever blocks the fake until it is signalled (it is a stand-in
// process, not a test: its sleep is what a hung editor does).
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// ready writes line to the FIFO $TEMP/fake-editor.ready when it exists; the
// open blocks until the test opens the read end, which is how a test knows
// both processes are up without polling.
func ready(line string) {
	p := filepath.Join(os.Getenv("TEMP"), ReadyFIFO)
	if fi, err := os.Stat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}

func record(args []string) {
	b, err := json.Marshal(Invocation{Args: args, Env: os.Environ()})
	if err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(os.Getenv("TEMP"), InvocationFile), b, 0o600)
}

// ReadInvocation reads the invocation a run recorded under tempDir.
func ReadInvocation(tempDir string) (Invocation, error) {
	var inv Invocation
	b, err := os.ReadFile(filepath.Join(tempDir, InvocationFile))
	if err != nil {
		return inv, err
	}
	return inv, json.Unmarshal(b, &inv)
}
