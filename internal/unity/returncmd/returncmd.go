package returncmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/proc"
)

// Limits of the return command (facts §2).
const (
	// Timeout is when the return command's tree is terminated.
	Timeout = 240 * time.Second
	// Grace is how long the tree may take to end after that.
	Grace = 30 * time.Second
	// OutputCap bounds the combined output (25 MiB).
	OutputCap = evidence.MaxFileBytes
	// TimeoutExitCode is reported whenever the action's own timer fired,
	// whatever the real code was (the classifier's return-timeout rule).
	TimeoutExitCode = 124
	// SignalExitCode is reported for a signal-only exit.
	SignalExitCode = 1
)

// EnvAllowlist are the variables passed through to the editor when set
// (facts §2); nothing else of the runner's environment reaches it.
var EnvAllowlist = []string{
	"ALLUSERSPROFILE", "APPDATA", "CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432",
	"HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "NUMBER_OF_PROCESSORS", "OS", "PROCESSOR_ARCHITECTURE",
	"ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432", "SystemDrive", "SystemRoot",
	"USERDOMAIN", "USERNAME", "USERPROFILE", "windir",
}

// Args returns the editor's arguments: -logFile - sends the log to stdout.
func Args(email, password string) []string {
	return []string{"-quit", "-batchmode", "-nographics", "-disableManagedDebugger", "-returnlicense",
		"-username", email, "-password", password, "-logFile", "-"}
}

// Passed are the allowlisted variables' values as the runner set them
// (EnvAllowlist name → value; an unset or empty one is absent), read once
// by the return action's settings constructor (AllowlistedValues). The
// return command reads no environment of its own.
type Passed map[string]string

// AllowlistedValues reads the EnvAllowlist variables through getenv (which
// is case-insensitive on Windows). Call it only from a settings
// constructor, at the edge.
func AllowlistedValues(getenv func(string) string) Passed {
	p := Passed{}
	for _, name := range EnvAllowlist {
		if v := getenv(name); v != "" {
			p[name] = v
		}
	}
	return p
}

// EditorEnv returns the editor's environment: the allowlisted variables
// that are set in passed, in EnvAllowlist order, then the forced
// SystemDrive=C:, SystemRoot=C:\Windows, windir=C:\Windows and
// TEMP=TMP=runnerTemp.
func EditorEnv(passed Passed, runnerTemp string) []string {
	forced := [][2]string{{"SystemDrive", `C:`}, {"SystemRoot", `C:\Windows`}, {"windir", `C:\Windows`}, {"TEMP", runnerTemp}, {"TMP", runnerTemp}}
	isForced := func(name string) bool {
		for _, f := range forced {
			if strings.EqualFold(f[0], name) {
				return true
			}
		}
		return false
	}
	var env []string
	for _, name := range EnvAllowlist {
		if isForced(name) {
			continue
		}
		if v := passed[name]; v != "" {
			env = append(env, name+"="+v)
		}
	}
	for _, f := range forced {
		env = append(env, f[0]+"="+f[1])
	}
	return env
}

// Outcome is the return command's result in the return action's terms.
type Outcome struct {
	// Completed is return-command-completed: false only when the tree had
	// to be killed after the grace (or the run was cancelled).
	Completed bool
	// ExitCode is return-exit-code, meaningful only when Completed.
	ExitCode int64
	// OutputComplete is false when the output overflowed the cap, the pipe
	// never reached end of file, or the command did not complete.
	OutputComplete bool
	// TimedOut, Overflow and Cancelled say what ended the command early.
	TimedOut  bool
	Overflow  bool
	Cancelled bool
	// HeldOpen: a process the editor started still held the output when
	// the drain window after the editor's exit ended, and was ended.
	HeldOpen bool
	// Output is the raw combined output (never written or logged as is).
	Output []byte
}

// RunWith runs the return command for the editor at path with the
// allowlisted variables in passed (read once at the edge).
func RunWith(ctx context.Context, editorPath, email, password string, passed Passed, runnerTemp string, after proc.After) (Outcome, error) {
	res, err := proc.Run(ctx, proc.Spec{
		Path: editorPath, Args: Args(email, password), Env: EditorEnv(passed, runnerTemp), Dir: runnerTemp,
		Timeout: Timeout, Grace: Grace, OutputCap: OutputCap,
	}, after)
	if err != nil {
		return Outcome{}, err
	}
	return FromResult(res), nil
}

// FromResult maps a process result to the action's outcome (facts §2).
func FromResult(r proc.Result) Outcome {
	o := Outcome{Completed: r.Completed, TimedOut: r.TimedOut, Overflow: r.Overflow, Cancelled: r.Cancelled, HeldOpen: r.HeldOpen, Output: r.Output}
	o.OutputComplete = r.Completed && r.OutputComplete && !r.Overflow
	switch {
	case !r.Completed:
		o.ExitCode = -1
	case r.TimedOut:
		o.ExitCode = TimeoutExitCode
	case r.Signaled:
		o.ExitCode = SignalExitCode
	default:
		o.ExitCode = r.ExitCode
	}
	return o
}

// PrepareDir makes dir (a direct child of runnerTemp) a fresh, empty,
// private directory: runnerTemp must have no link in its ancestry; an
// existing entry at dir is removed first (a link unlinked, a directory
// removed recursively without following links), then dir is created
// non-recursively.
func PrepareDir(runnerTemp, dir string) error {
	if filepath.Dir(dir) != filepath.Clean(runnerTemp) {
		return fmt.Errorf("evidence directory %s is not directly under RUNNER_TEMP", dir)
	}
	if err := fileid.CheckAncestry(runnerTemp); err != nil {
		return fmt.Errorf("RUNNER_TEMP: %w", err)
	}
	if fi, err := os.Lstat(dir); err == nil {
		if fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 {
			err = os.RemoveAll(dir)
		} else {
			err = os.Remove(dir)
		}
		if err != nil {
			return fmt.Errorf("remove the previous evidence directory: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create the evidence directory: %w", err)
	}
	return nil
}

// Evidence is what WriteEvidence wrote.
type Evidence struct {
	// Complete is evidence-capture-complete: the whole output, valid UTF-8,
	// redacted within the cap, written once.
	Complete bool
	// Digest is the SHA-256 of the bytes written (return-log-digest);
	// meaningful only when Written (complete or not).
	Digest string
	// Written is false when nothing could be written (the file already
	// existed, or the write failed).
	Written bool
	// Problem says why capture is incomplete, for the log (never content).
	Problem string
}

// WriteEvidence redacts output and writes it to path with exclusive
// create. outputComplete is the command side's verdict. One leading UTF-8
// byte order mark is dropped first, as the reference's UTF-8 decoder
// (TextDecoder without ignoreBOM) drops it, so both write the same bytes
// and the same digest. Invalid UTF-8 is
// written with U+FFFD replacements (so a 20111 marker still counts) but
// makes the capture incomplete, and so does redacted text over the cap
// (written truncated at a character boundary). A failed exclusive create is
// not an error: it makes the capture incomplete.
func WriteEvidence(path string, output []byte, outputComplete bool, credentials ...string) Evidence {
	ev := Evidence{Complete: outputComplete}
	if !outputComplete {
		ev.Problem = "the command's output was not captured completely"
	}
	text := strings.TrimPrefix(string(output), "\ufeff")
	if !utf8.Valid(output) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		ev.Complete, ev.Problem = false, "the command's output was not valid UTF-8"
	}
	text = evidence.Redact(text, credentials...)
	if len(text) > OutputCap {
		cut := OutputCap
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		ev.Complete, ev.Problem = false, "the redacted output exceeds the 25 MiB cap"
	}
	data := []byte(text)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		ev.Complete, ev.Problem = false, "the evidence file could not be created exclusively: "+err.Error()
		return ev
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		ev.Complete, ev.Problem = false, "the evidence file could not be written"
		return ev
	}
	ev.Written = true
	ev.Digest = evidence.FileDigest(data)
	return ev
}
