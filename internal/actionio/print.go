package actionio

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// EscapeData escapes a value for a workflow command message, exactly as
// go-githubactions (command.go escapeData) and the toolkit's
// packages/core/src/command.ts do: % → %25, CR → %0D, LF → %0A. The runner
// unescapes those three in command messages only; in a plain log line the
// escapes stay visible, which is the point: a value can never start a new
// line, so it can never become a workflow command (::add-mask::,
// ::error::, ::stop-commands::, the deprecated ::set-output).
func EscapeData(v string) string {
	v = strings.ReplaceAll(v, "%", "%25")
	v = strings.ReplaceAll(v, "\r", "%0D")
	return strings.ReplaceAll(v, "\n", "%0A")
}

// Println prints msg as one plain log line (not a workflow command). Every
// line a binary prints that carries data from the state document, the API
// or an input goes through here or through Warning/Error/Notice: msg is
// escaped with EscapeData, and a line that would begin with "::" is
// indented, so nothing a value contains is interpreted by the runner.
func (a *IO) Println(msg string) {
	line := EscapeData(msg)
	if strings.HasPrefix(line, "::") {
		line = "  " + line
	}
	_, _ = io.WriteString(a.w, line+"\n")
}

// Printf formats with fmt.Sprintf and prints the result with Println.
func (a *IO) Printf(format string, args ...any) { a.Println(fmt.Sprintf(format, args...)) }

// ErrorCode emits ::error title=<code>::msg: the stable reason code goes in
// the annotation title (escaped as a command property by go-githubactions),
// so operators can search for it, and msg, collapsed to one line, is the
// annotation text.
func (a *IO) ErrorCode(code, msg string) {
	if code == "" {
		a.Error(msg)
		return
	}
	a.gha.WithFieldsMap(map[string]string{"title": code}).Errorf("%s", OneLine(msg))
}

// CheckOutput reports why value cannot be written as output name ("" when it
// can): an invalid name, or a value containing the file-command delimiter
// (which would end the heredoc early and let the rest of the value define
// outputs of its own). Callers check values that come from inputs or the
// environment before sending any request.
func CheckOutput(name, value string) error {
	if !outputNameRE.MatchString(name) {
		return fmt.Errorf("actionio: invalid output name %q", name)
	}
	if strings.Contains(value, fileCommandDelimiter) {
		return &InputError{Input: name, Code: CodePatternMismatch, Message: "would contain the runner's file-command delimiter"}
	}
	return nil
}

// SetOutputs writes a whole set of outputs ({name, value} pairs) or none. Every name and value is
// checked first; the entries are then formatted by go-githubactions into a
// private staging file and appended to GITHUB_OUTPUT with a single write, so
// a consumer never sees half a set (for example acquired=true without
// holder-id). Without GITHUB_OUTPUT the write is skipped, as SetOutput does;
// the names are recorded either way.
func (a *IO) SetOutputs(outs [][2]string) (err error) {
	for _, o := range outs {
		if err := CheckOutput(o[0], o[1]); err != nil {
			return err
		}
	}
	for _, o := range outs {
		a.recordOutput(o[0])
	}
	path := a.getenv("GITHUB_OUTPUT")
	if path == "" || len(outs) == 0 {
		return nil
	}
	staging, err := os.CreateTemp("", "build-lock-outputs-*")
	if err != nil {
		return fmt.Errorf("actionio: stage outputs: %w", err)
	}
	name := staging.Name()
	_ = staging.Close()
	defer os.Remove(name)
	stage := githubactions.New(
		githubactions.WithGetenv(func(k string) string {
			if k == "GITHUB_OUTPUT" {
				return name
			}
			return a.getenv(k)
		}),
		githubactions.WithWriter(io.Discard),
	)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("actionio: stage outputs: %v", r)
		}
	}()
	for _, o := range outs {
		stage.SetOutput(o[0], o[1])
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("actionio: stage outputs: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("actionio: write outputs: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("actionio: write outputs: %w", err)
	}
	return f.Close()
}

// PrintLines prints text (for example a job summary's Markdown when no
// GITHUB_STEP_SUMMARY exists) line by line through Println.
func (a *IO) PrintLines(text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		a.Println(line)
	}
}
