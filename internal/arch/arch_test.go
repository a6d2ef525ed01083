package arch_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/"

// Layers, lowest first (docs/architecture.md "Layers"). A package imports
// only packages of its own layer or below; within the actions layer an
// action imports no sibling action.
const (
	base     = iota // no project imports but each other: clock, actionio, strings and Markdown, the planted-bug switch
	core            // pure rules over documents: no I/O (coreNoIO)
	adapters        // GitHub's API, our emulator of it, the state store over it, the machine's processes and files
	domain          // what several actions share: settings, targets, recovery, doctor, monitors, history commands
	actions         // one package per action (internal/actions/<name>)
	harness         // simulation, bench, demo, crash and contract tests, fixtures: may use everything
	binary          // cmd/<name>, tools/
)

var layerNames = []string{"base", "core", "adapters", "domain", "actions", "harness", "binary"}

// layerOf lists every package by prefix (the longest prefix wins); a new
// package fails the test until it is placed here and in
// docs/architecture.md.
var layerOf = map[string]int{
	"internal/clock": base, "internal/actionio": base, "internal/jsstr": base, "internal/markdown": base,
	"internal/plant": base, "internal/machineid": base, "internal/releaseset": base,
	"internal/unity/fileid": base, "internal/unity/proc": base,

	"internal/lockstate": core, "internal/checker": core, "internal/history": core, "internal/lockview": core,
	"internal/policy": core, "internal/machinequeue": core, "internal/unity": core,

	"internal/ghclient": adapters, "internal/emulator": adapters, "internal/requestbudget": adapters,
	"internal/githubissue": adapters, "internal/store": adapters, "internal/prhead": adapters,
	"internal/policy/snapshot": adapters, "internal/history/ghsource": adapters, "internal/machinequeue/filestore": adapters,
	"internal/machinequeue/liveness": adapters, "internal/unity/returncmd": adapters, "internal/unity/signature": adapters,

	"internal/edgesettings": domain, "internal/lockaction": domain, "internal/recovery": domain,
	"internal/doctor": domain, "internal/monitor": domain, "internal/lockinit": domain,
	"internal/linearizability": domain, "internal/historycli": domain, "internal/policy/check": domain,
	"internal/policy/enroll": domain,

	"internal/actions": actions,

	"internal/sim": harness, "internal/bench": harness, "internal/demo": harness, "internal/crashtest": harness,
	"internal/e2e": harness, "internal/acttest": harness, "internal/actioncontract": harness,
	"internal/actions/actiontest": harness, "internal/actions/reap/reaptest": harness,
	"internal/history/histgen": harness, "internal/unity/fakeeditor": harness, "internal/unity/e2e": harness, "internal/testexec": harness,
	"internal/edgesettings/settingstest": harness, "internal/arch": harness,

	"cmd": binary, "tools": binary,
}

// coreNoIO: the core layer's packages import nothing that reaches a
// process, a file or the network.
var coreNoIO = []string{"os", "os/exec", "net", "net/http", "syscall"}

// testDoubles are the packages production code never imports: only the
// harness, and the one binary that runs the demo and the emulator
// (cmd/buildlock), may.
var testDoubles = []string{"internal/emulator"}

// actionShared are the packages under internal/actions every action may
// import; dispatchers are command muxes serving several actions.
var (
	actionShared = []string{"internal/actions/actionkit"}
	dispatchers  = map[string][]string{"internal/actions/classify": {"internal/actions/classifychanges", "internal/actions/cleanupevidence"}}
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

func layer(path string) (int, bool) {
	best, l := "", 0
	for prefix, v := range layerOf {
		if (path == prefix || strings.HasPrefix(path, prefix+"/")) && len(prefix) > len(best) {
			best, l = prefix, v
		}
	}
	return l, best != ""
}

func project(imports []string) []string {
	var out []string
	for _, i := range imports {
		if rest, ok := strings.CutPrefix(i, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

func actionOf(path string) string {
	rest, ok := strings.CutPrefix(path, "internal/actions/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return "internal/actions/" + name
}

// TestLayering: every import runs down the layers (or within one), no
// action imports a sibling action, the core does no I/O, and production
// never imports the emulator.
func TestLayering(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		from, ok := layer(p.ImportPath)
		if !ok {
			t.Errorf("%s has no layer: place it in layerOf and in docs/architecture.md", p.ImportPath)
			continue
		}
		for _, imp := range project(p.Imports) {
			to, ok := layer(imp)
			if !ok {
				continue // reported as its own package
			}
			if to > from {
				t.Errorf("%s (%s) imports %s (%s): an import that runs back up the layers", p.ImportPath, layerNames[from], imp, layerNames[to])
			}
			if from == actions && to == actions {
				a, b := actionOf(p.ImportPath), actionOf(imp)
				if a != b && !slices.Contains(actionShared, b) && !slices.Contains(dispatchers[a], b) {
					t.Errorf("%s imports the sibling action %s: move what they share below internal/actions", p.ImportPath, imp)
				}
			}
			if from < harness && p.ImportPath != "cmd/buildlock" && isTestDouble(imp) && !isTestDouble(p.ImportPath) {
				t.Errorf("%s imports the test double %s: production never imports the emulator", p.ImportPath, imp)
			}
		}
		if from == core {
			for _, imp := range p.Imports {
				if slices.Contains(coreNoIO, imp) {
					t.Errorf("%s (core) imports %s: the core does no I/O", p.ImportPath, imp)
				}
			}
		}
	}
}

// TestActionBinariesLinkNoTestDouble: the binaries the actions run
// (cmd/<action>) link neither the emulator nor any harness package.
func TestActionBinariesLinkNoTestDouble(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, p := range listPackages(t) {
		if !strings.HasPrefix(p.ImportPath, "cmd/") || p.ImportPath == "cmd/buildlock" {
			continue
		}
		checked++
		for _, dep := range project(p.Deps) {
			if l, _ := layer(dep); l == harness || isTestDouble(dep) {
				t.Errorf("%s links %s", p.ImportPath, dep)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("checked %d action binaries", checked)
	}
}

func isTestDouble(path string) bool {
	for _, d := range testDoubles {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
