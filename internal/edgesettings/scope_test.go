package edgesettings_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// envRead matches a call that reads the environment, or an actionio.IO
// built over the process's (rather than the settled files') environment.
var envRead = regexp.MustCompile(`\b(getenv|Getenv|LookupEnv|Environ)\(|actionio\.New\((getenv|[a-z]+\.Getenv)\b`)

// roots are every package of the module (issue 24: settings are read once,
// at the edge). allowed are the files that may read the environment
// outside a settings.go, and why; a cmd/*/main.go is the edge itself.
var (
	roots   = []string{"..", "../../cmd"}
	allowed = map[string]string{
		// The mechanism: an IO reads only through the getenv it was given
		// (IO hands it only the file-command paths), and this package's
		// readers are what a settings.go calls.
		"../actionio/actionio.go":         "the IO over an injected getenv",
		"../actionio/outputfile.go":       "the IO over an injected getenv",
		"../actionio/print.go":            "the IO over an injected getenv",
		"../edgesettings/edgesettings.go": "the readers a settings.go calls",
		// AllowlistedValues is the return command's reader, called only by
		// return-unity-license's settings.go.
		"../unity/returncmd/returncmd.go": "AllowlistedValues, for a settings constructor",
		// Test fixtures and harnesses compiled into non-test files.
		"../unity/fakeeditor/fakeeditor.go":    "test fixture program: reads its own environment as the real editor would",
		"../unity/fakeeditor/runner.go":        "test fixture: the fake runner's environment",
		"../acttest/acttest.go":                "the act harness builds a child process environment",
		"../actions/reap/reaptest/reaptest.go": "test world: its Getenv is the environment it hands the reaper",
	}
)

// TestOnlySettingsReadTheEnvironment: in the whole module no non-test file
// but a settings.go, a command's main.go and the allowed ones calls getenv
// or builds an IO over the whole environment.
func TestOnlySettingsReadTheEnvironment(t *testing.T) {
	t.Parallel()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			p := filepath.ToSlash(path)
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
				filepath.Base(p) == "settings.go" || allowed[p] != "" ||
				(strings.HasPrefix(p, "../../cmd/") && filepath.Base(p) == "main.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if code, _, _ := strings.Cut(line, "//"); envRead.MatchString(code) {
					t.Errorf("%s:%d reads the environment outside settings.go: %s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
