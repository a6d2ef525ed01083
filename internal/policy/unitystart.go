package policy

import (
	"path"
	"regexp"
	"strings"
)

// A step "starts Unity" when its script can launch the editor, licensed or
// not: the editor takes a seat as soon as it runs with credentials or a
// cached license, so every way of starting it must come after acquire
// (the reference flags every invocation of the editor executable, not
// only the licensing flags). startsUnity recognizes, command by command:
//
//   - the editor executable in command position, by name or by path
//     (Unity, Unity.exe, unity-editor, .../Unity.app/Contents/MacOS/Unity),
//     after PowerShell's & or ., or behind a launcher word (exec, call,
//     start, sudo, nohup, time, xvfb-run, env, cmd /c);
//   - Start-Process (or saps/start) naming the editor, positionally or
//     by -FilePath;
//   - a variable holding the editor path in command position
//     ($env:UNITY_EDITOR_PATH, "${UNITY_PATH}", $unityExe, ...), or the
//     ensure-unity-editor step's editor-path output anywhere in the step;
//   - a script path given the editor's own command line (-batchmode,
//     -executeMethod, -runTests, -projectPath, -buildTarget, -nographics)
//     or the licensing flags (-serial, -manualLicenseFile, -username).
//
// A command that only returns the license (-returnlicense without an
// activation flag) does not start a licensed editor.

var (
	unityCLIFlagRE    = regexp.MustCompile(`(?i)(^|[\s'"(])-(batchmode|executemethod|runtests|projectpath|buildtarget|nographics|serial|manuallicensefile|username|createmanualactivationfile)\b`)
	unityActivationRE = regexp.MustCompile(`(?i)(^|[\s'"(])-(serial|manuallicensefile|executemethod|runtests)\b`)
	unityReturnFlagRE = regexp.MustCompile(`(?i)(^|[\s'"(])-returnlicense\b`)
	editorVarRE       = regexp.MustCompile(`(?i)^[$%]\{?(env:)?[a-z0-9_]*unity[a-z0-9_]*(editor|exe|path|bin|app)[a-z0-9_]*\}?%?$|^[$%]\{?(env:)?[a-z0-9_]*editor_?(path|exe)[a-z0-9_]*\}?%?$`)
	editorPathOutRE   = regexp.MustCompile(`(?i)\bsteps\.[a-z0-9_-]+\.outputs\.editor-path\b`)
	commandSplitRE    = regexp.MustCompile(`\r?\n|;|&&|\|\||\|`)
)

// launchers are words that run the command after them (their own options
// are skipped).
var launchers = map[string]bool{"exec": true, "call": true, "sudo": true, "nohup": true, "time": true, "xvfb-run": true,
	"env": true, "command": true, "nice": true, "timeout": true, "cmd": true, "cmd.exe": true, "/c": true, "/k": true,
	"invoke-item": true, "ii": true, "arch": true}

// startsUnity reports whether a run: script can start the Unity editor.
func startsUnity(run string) bool {
	if editorPathOutRE.MatchString(run) {
		return true
	}
	for _, cmd := range commandSplitRE.Split(run, -1) {
		if commandStartsUnity(cmd) {
			return true
		}
	}
	return false
}

func commandStartsUnity(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || strings.HasPrefix(cmd, "#") {
		return false
	}
	if unityReturnFlagRE.MatchString(cmd) && !unityActivationRE.MatchString(cmd) {
		return false
	}
	if unityCLIFlagRE.MatchString(cmd) {
		return true
	}
	toks := shellFields(cmd)
	launched := false // a launcher word came before: its options are skipped
	for i, t := range toks {
		raw := strings.ToLower(unquote(t))
		if raw == "&" || raw == "." {
			launched = true // PowerShell's call and dot-source operators
			continue
		}
		w := strings.TrimPrefix(raw, "&")
		if unityExecutable(w) || editorVarRE.MatchString(unquote(w)) {
			return true
		}
		switch {
		case w == "start-process" || w == "saps" || w == "start" || w == "open":
			// The program may follow any option: look at every word.
			for _, rest := range toks[i+1:] {
				r := strings.ToLower(unquote(rest))
				if unityExecutable(r) || editorVarRE.MatchString(r) {
					return true
				}
			}
			return false
		case launchers[w]:
			launched = true
			continue
		case w == "=" || (i+1 < len(toks) && toks[i+1] == "="):
			continue // $editor = & ...
		case isAssignment(w):
			continue // NAME=value before the command (bash, env)
		case launched && (strings.HasPrefix(w, "-") || strings.HasPrefix(w, "/") || isNumber(w)):
			continue // a launcher's option (timeout 10, cmd /c, sudo -E)
		}
		return false // the command word, and it is not the editor
	}
	return false
}

// isNumber reports whether w is a plain duration or count (timeout 10m).
func isNumber(w string) bool {
	for _, c := range w {
		if (c < '0' || c > '9') && c != '.' && c != 's' && c != 'm' && c != 'h' {
			return false
		}
	}
	return w != "" && w[0] >= '0' && w[0] <= '9'
}

// unityExecutable reports whether a word names the editor executable.
func unityExecutable(w string) bool {
	w = strings.Trim(strings.ReplaceAll(w, `\`, "/"), `'"(){}`)
	if w == "" {
		return false
	}
	if strings.Contains(w, "unity.app/contents/macos/unity") || strings.HasSuffix(w, "unity.app") {
		return true
	}
	switch path.Base(w) {
	case "unity", "unity.exe", "unity-editor", "unity-editor.exe":
		return true
	}
	return false
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], `$/\ "'`)
}

func unquote(s string) string { return strings.Trim(s, `'"`) }

// shellFields splits a command into words, keeping quoted text (with its
// spaces) in one word.
func shellFields(s string) []string {
	var out []string
	var b strings.Builder
	var q byte
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			b.WriteByte(c)
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
			b.WriteByte(c)
		case c == ' ' || c == '\t':
			flush()
		case c == '=' && b.Len() == 0 && len(out) > 0 && strings.HasPrefix(strings.ToLower(out[len(out)-1]), "$"):
			// $x = & ... : the assignment operator is its own word.
			out = append(out, "=")
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return out
}
