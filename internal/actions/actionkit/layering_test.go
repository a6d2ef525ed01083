package actionkit_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const actionsPath = "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/"

// sharedBelowActions are the packages under internal/actions that every
// action may import: what actions share lives below them, named for what
// it is (actionkit; actiontest is for tests only).
var sharedBelowActions = map[string]bool{"actionkit": true}

// dispatchers are binaries' command muxes that serve several actions and
// so import each (cmd/classify runs classify-changes and
// classify-unity-cleanup-evidence).
var dispatchers = map[string][]string{"classify": {"classifychanges", "cleanupevidence"}}

// TestAnActionNeverImportsASiblingAction: no non-test file of an action's
// package imports another action's package (the developers' guide: "an
// action never reaches into a sibling action's package"); what two share
// lives in actionkit or below internal/actions.
func TestAnActionNeverImportsASiblingAction(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		action := e.Name()
		err := filepath.WalkDir(filepath.Join("..", action), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				rest, ok := strings.CutPrefix(p, actionsPath)
				if !ok {
					continue
				}
				other, _, _ := strings.Cut(rest, "/")
				if other == action || sharedBelowActions[other] || slices.Contains(dispatchers[action], other) {
					continue
				}
				t.Errorf("%s imports the sibling action %s: move what they share below internal/actions (or into actionkit)", filepath.ToSlash(path), p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: the walk did not find the actions", checked)
	}
}
