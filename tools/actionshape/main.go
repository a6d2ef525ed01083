// Command actionshape checks or rewrites every composite action.yml under
// .github/actions into the canonical shape (docs/packaging.md "Action
// shape"): a bash step for Linux and macOS and a Windows PowerShell step for
// Windows, both running the one launcher contract for the binary the
// action's internal/actioncontract Registry entry names, with every input
// mapped under the spelling the binary reads and every output taken from
// whichever step ran.
//
// Usage (from the repository root):
//
//	go run ./tools/actionshape        # report actions not in the shape (exit 1)
//	go run ./tools/actionshape -w     # rewrite them in place
//	go run ./tools/actionshape -w dir # only .github/actions/dir
//
// Only the output value: lines and the runs: section (which must be the
// last top-level key) change; names, descriptions, inputs and comments above
// runs: are kept byte for byte. The Registry entry must exist first.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

func main() {
	if err := run(os.Args[1:], ".", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "actionshape:", err)
		os.Exit(1)
	}
}

func run(args []string, root string, stdout io.Writer) error {
	fs := flag.NewFlagSet("actionshape", flag.ContinueOnError)
	write := fs.Bool("w", false, "rewrite action.yml files in place")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		paths, err := filepath.Glob(filepath.Join(root, ".github", "actions", "*", "action.yml"))
		if err != nil {
			return err
		}
		for _, p := range paths {
			dirs = append(dirs, filepath.Base(filepath.Dir(p)))
		}
		sort.Strings(dirs)
	}
	var stale []string
	for _, dir := range dirs {
		f, err := actioncontract.ReadActionFile(root, dir)
		if err != nil {
			return err
		}
		reg, ok := actioncontract.Registry[dir]
		if !ok {
			return fmt.Errorf("%s: add its entry (binary, inputs, outputs) to internal/actioncontract/registry.go first", dir)
		}
		if reg.Node || f.Using != "composite" {
			continue // the node24 action keeps its own shape (post:)
		}
		want, err := f.Canonical(reg)
		if err != nil {
			return err
		}
		if bytes.Equal(want, f.Raw) {
			continue
		}
		if *write {
			if err := os.WriteFile(f.Path, want, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "rewrote %s\n", f.Path)
			continue
		}
		stale = append(stale, dir)
	}
	if len(stale) > 0 {
		return fmt.Errorf("not in the canonical shape (run go run ./tools/actionshape -w): %v", stale)
	}
	return nil
}
