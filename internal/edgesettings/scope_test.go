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

// settled are the packages whose binaries read their environment only in
// a settings.go (issue 24), with the files allowed to read it otherwise
// and why.
var (
	settled = []string{
		"../monitor", "../historycli", "../unity",
		"../actions/validatelicense", "../actions/requirevalidation", "../actions/classifychanges", "../actions/classify",
		"../actions/preflight", "../actions/cleanupgate", "../actions/cleanupevidence",
	}
	allowed = map[string]string{
		// The fake Unity editor is a test fixture program: it reads its
		// own process environment as the real editor would.
		"../unity/fakeeditor/fakeeditor.go": "test fixture program",
		"../unity/fakeeditor/runner.go":     "test fixture: the fake runner's environment",
		// AllowlistedValues is the return command's reader for a settings
		// constructor; the return action calls it through Env/Run until it
		// passes values.
		"../unity/returncmd/returncmd.go": "AllowlistedValues, for a settings constructor",
	}
)

// TestOnlySettingsReadTheEnvironment: in the settled packages no non-test
// file but a settings.go (and the allowed ones) calls getenv.
func TestOnlySettingsReadTheEnvironment(t *testing.T) {
	t.Parallel()
	for _, root := range settled {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				filepath.Base(path) == "settings.go" || allowed[filepath.ToSlash(path)] != "" {
				return err
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
