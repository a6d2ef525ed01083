package releaseset

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Target is one release platform in Go's names.
type Target struct {
	GOOS, GOARCH string
}

// String is "goos/goarch", the form make cross and go tool dist use.
func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// Targets are the release platforms: Linux, macOS and Windows on x64 and
// arm64 (the RUNNER_OS × RUNNER_ARCH pairs GitHub documents for runners,
// https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Excluded lists commands under cmd/ that are deliberately not released,
// each with the reason. It is empty: every command, the operator CLI
// buildlock (doctor, status, emulator) and the two monitors included, ships
// for every target.
var Excluded = map[string]string{}

// Commands returns the released commands of the module at root, sorted:
// every directory cmd/<name> holding a non-test .go file, minus [Excluded].
// It fails if an exclusion names no command (a stale entry).
func Commands(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		goFiles, err := filepath.Glob(filepath.Join(root, "cmd", e.Name(), "*.go"))
		if err != nil {
			return nil, err
		}
		hasMain := false
		for _, f := range goFiles {
			hasMain = hasMain || !strings.HasSuffix(f, "_test.go")
		}
		if !hasMain {
			continue
		}
		present[e.Name()] = true
		if _, skip := Excluded[e.Name()]; !skip {
			out = append(out, e.Name())
		}
	}
	for name := range Excluded {
		if !present[name] {
			return nil, fmt.Errorf("releaseset: Excluded names %q, which is not a command under cmd/", name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// AssetKey is the manifest key of cmd on t: <cmd>_<goos>_<goarch>.
func AssetKey(cmd string, t Target) string { return cmd + "_" + t.GOOS + "_" + t.GOARCH }

// AssetFile is the release asset's file name: the key, plus .exe on Windows.
func AssetFile(cmd string, t Target) string {
	if t.GOOS == "windows" {
		return AssetKey(cmd, t) + ".exe"
	}
	return AssetKey(cmd, t)
}

// AssetKeys returns every manifest key a complete release of cmds has.
func AssetKeys(cmds []string) []string {
	var keys []string
	for _, c := range cmds {
		for _, t := range Targets {
			keys = append(keys, AssetKey(c, t))
		}
	}
	sort.Strings(keys)
	return keys
}

// Missing returns the keys of AssetKeys(cmds) that have is false for.
func Missing(cmds []string, has func(key string) bool) []string {
	var out []string
	for _, k := range AssetKeys(cmds) {
		if !has(k) {
			out = append(out, k)
		}
	}
	return out
}
