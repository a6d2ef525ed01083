package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Target is one GOOS/GOARCH pair.
type Target struct {
	GOOS, GOARCH string
}

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// ParseTargets decodes "linux/amd64 darwin/arm64 ..." (space-separated,
// no duplicates).
func ParseTargets(s string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		goos, goarch, ok := strings.Cut(f, "/")
		if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
			return nil, fmt.Errorf("target %q is not GOOS/GOARCH", f)
		}
		if seen[f] {
			return nil, fmt.Errorf("target %s is listed twice", f)
		}
		seen[f] = true
		out = append(out, Target{goos, goarch})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no targets")
	}
	return out, nil
}

// Package is what go list reports about one package for one target.
type Package struct {
	ImportPath string
	// Files are the Go files the target compiles or vets: GoFiles,
	// TestGoFiles and XTestGoFiles.
	Files []string
	// Imports are the imports of those files (Imports, TestImports,
	// XTestImports).
	Imports []string
}

// VetJob vets Packages for Target.
type VetJob struct {
	Target   Target
	Packages []string
	// Reason says why this job exists (printed).
	Reason string
}

// wordBits is the pointer size of the architectures the planner knows;
// an architecture missing here is always vetted.
var wordBits = map[string]int{"amd64": 64, "arm64": 64, "386": 32, "arm": 32}

// archVaryingAPIs are the packages whose exported types differ between
// architectures of one operating system (struct field widths of
// syscall.Stat_t, unix.Stat_t, ...). vet's size-aware checks (shift) can
// judge the same source differently against them, so an importer is vetted
// on every architecture.
var archVaryingAPIs = []string{"syscall", "golang.org/x/sys/unix", "golang.org/x/sys/windows", "golang.org/x/sys/cpu"}

func varies(imports []string) bool {
	for _, imp := range imports {
		if slices.Contains(archVaryingAPIs, imp) {
			return true
		}
	}
	return false
}

// PlanVet decides which packages to vet on which target, given what go
// list reported for each target (every package of each target was
// compiled by the compiler, which type-checks it there). The first target
// of each operating system vets every package. Another architecture of the
// same operating system vets a package only when vetting it there could
// find something the first did not:
//
//   - its file set differs (build constraints on the architecture), or
//     it is missing on the first;
//   - it imports an API whose types differ by architecture
//     (archVaryingAPIs);
//   - or the two architectures differ in word size (or one is unknown),
//     in which case every package is vetted.
//
// Otherwise the analyzers see the same files with the same types and
// sizes, and report the same.
func PlanVet(targets []Target, listings map[Target][]Package) []VetJob {
	first := map[string]Target{}
	var jobs []VetJob
	for _, t := range targets {
		pkgs := listings[t]
		base, seen := first[t.GOOS]
		if !seen {
			first[t.GOOS] = t
			jobs = append(jobs, VetJob{Target: t, Packages: paths(pkgs), Reason: "first architecture of " + t.GOOS + ": every package"})
			continue
		}
		bb, okb := wordBits[base.GOARCH]
		tb, okt := wordBits[t.GOARCH]
		if !okb || !okt || bb != tb {
			jobs = append(jobs, VetJob{Target: t, Packages: paths(pkgs), Reason: "word size differs from " + base.String() + ": every package"})
			continue
		}
		baseFiles := map[string][]string{}
		for _, p := range listings[base] {
			baseFiles[p.ImportPath] = p.Files
		}
		var vet []string
		for _, p := range pkgs {
			bf, ok := baseFiles[p.ImportPath]
			if !ok || !slices.Equal(sorted(bf), sorted(p.Files)) || varies(p.Imports) {
				vet = append(vet, p.ImportPath)
			}
		}
		if len(vet) > 0 {
			jobs = append(jobs, VetJob{Target: t, Packages: vet, Reason: fmt.Sprintf("differs from %s in files or arch-dependent imports: %d of %d packages", base, len(vet), len(pkgs))})
		}
	}
	return jobs
}

func paths(pkgs []Package) []string {
	out := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p.ImportPath)
	}
	return out
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// ParseList decodes the lines of the go list template listTemplate.
func ParseList(out string) ([]Package, error) {
	var pkgs []Package
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || fields[0] == "" {
			return nil, fmt.Errorf("go list line %q is not <path>\\t<files>\\t<imports>", line)
		}
		pkgs = append(pkgs, Package{ImportPath: fields[0], Files: strings.Fields(fields[1]), Imports: strings.Fields(fields[2])})
	}
	return pkgs, nil
}

// listTemplate is the go list -f template ParseList reads: the import
// path, the files vet looks at and their imports.
const listTemplate = `{{.ImportPath}}	{{join .GoFiles " "}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}	{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`
