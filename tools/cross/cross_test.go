package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var six, _ = ParseTargets("linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64")

func TestParseTargets(t *testing.T) {
	t.Parallel()
	assert.Len(t, six, 6)
	for _, bad := range []string{"", "linux", "linux/", "/amd64", "linux/amd64/x", "linux/amd64 linux/amd64"} {
		_, err := ParseTargets(bad)
		assert.Error(t, err, bad)
	}
}

func TestPlanVet(t *testing.T) {
	t.Parallel()
	same := []Package{
		{ImportPath: "m/a", Files: []string{"a.go", "a_test.go"}, Imports: []string{"fmt"}},
		{ImportPath: "m/fileid", Files: []string{"fileid_unix.go"}, Imports: []string{"syscall"}},
	}
	listings := map[Target][]Package{}
	for _, tg := range six {
		listings[tg] = same
	}
	// windows/arm64 has an architecture-specific file in m/a.
	listings[six[5]] = []Package{
		{ImportPath: "m/a", Files: []string{"a.go", "a_test.go", "a_arm64.go"}, Imports: []string{"fmt"}},
		same[1],
		{ImportPath: "m/armonly", Files: []string{"x.go"}},
	}
	jobs := PlanVet(six, listings)
	got := map[string][]string{}
	for _, j := range jobs {
		got[j.Target.String()] = j.Packages
	}
	assert.Equal(t, map[string][]string{
		"linux/amd64":   {"m/a", "m/fileid"},
		"linux/arm64":   {"m/fileid"}, // same files, but it imports syscall
		"darwin/amd64":  {"m/a", "m/fileid"},
		"darwin/arm64":  {"m/fileid"},
		"windows/amd64": {"m/a", "m/fileid"},
		"windows/arm64": {"m/a", "m/fileid", "m/armonly"}, // other files; missing on amd64
	}, got)

	// A different word size vets everything again.
	mixed, _ := ParseTargets("linux/amd64 linux/386")
	jobs = PlanVet(mixed, map[Target][]Package{mixed[0]: same, mixed[1]: same})
	require.Len(t, jobs, 2)
	assert.Equal(t, []string{"m/a", "m/fileid"}, jobs[1].Packages)
	assert.Contains(t, jobs[1].Reason, "word size")
	// An architecture the planner does not know is vetted in full.
	odd, _ := ParseTargets("linux/amd64 linux/riscv64")
	jobs = PlanVet(odd, map[Target][]Package{odd[0]: same, odd[1]: same})
	require.Len(t, jobs, 2)
	assert.Equal(t, []string{"m/a", "m/fileid"}, jobs[1].Packages)
}

// TestPlanVetIsSound (property): a (target, package) pair that is not
// vetted has a vetted twin on the same operating system with the same
// files, the same word size and no architecture-dependent import; and the
// first target of each operating system vets everything.
func TestPlanVetIsSound(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		archs := []string{"amd64", "arm64", "386", "riscv64"}
		var targets []Target
		seen := map[Target]bool{}
		for _, goos := range []string{"linux", "windows"} {
			for _, a := range archs {
				if rapid.Bool().Draw(t, goos+a) {
					tg := Target{goos, a}
					if !seen[tg] {
						seen[tg] = true
						targets = append(targets, tg)
					}
				}
			}
		}
		if len(targets) == 0 {
			return
		}
		listings := map[Target][]Package{}
		for _, tg := range targets {
			n := rapid.IntRange(0, 4).Draw(t, "n")
			for i := 0; i < n; i++ {
				p := Package{ImportPath: fmt.Sprintf("m/p%d", i), Files: []string{rapid.SampledFrom([]string{"a.go", "b.go"}).Draw(t, "file")}}
				if rapid.Bool().Draw(t, "syscall") {
					p.Imports = []string{"syscall"}
				}
				listings[tg] = append(listings[tg], p)
			}
		}
		vetted := map[Target]map[string]bool{}
		for _, j := range PlanVet(targets, listings) {
			if vetted[j.Target] == nil {
				vetted[j.Target] = map[string]bool{}
			}
			for _, p := range j.Packages {
				vetted[j.Target][p] = true
			}
		}
		firstOf := map[string]Target{}
		for _, tg := range targets {
			if _, ok := firstOf[tg.GOOS]; !ok {
				firstOf[tg.GOOS] = tg
			}
		}
		for _, tg := range targets {
			base := firstOf[tg.GOOS]
			for _, p := range listings[tg] {
				if vetted[tg][p.ImportPath] {
					continue
				}
				if tg == base {
					t.Fatalf("%s: %s not vetted on the first architecture", tg, p.ImportPath)
				}
				if wordBits[tg.GOARCH] == 0 || wordBits[tg.GOARCH] != wordBits[base.GOARCH] || varies(p.Imports) {
					t.Fatalf("%s: %s skipped though it can differ from %s", tg, p.ImportPath, base)
				}
				idx := slices.IndexFunc(listings[base], func(q Package) bool { return q.ImportPath == p.ImportPath })
				if idx < 0 || !slices.Equal(sorted(listings[base][idx].Files), sorted(p.Files)) || !vetted[base][p.ImportPath] {
					t.Fatalf("%s: %s skipped without an identical vetted twin on %s", tg, p.ImportPath, base)
				}
			}
		}
	})
}

func TestParseList(t *testing.T) {
	t.Parallel()
	pkgs, err := ParseList("m/a\ta.go  a_test.go\tfmt  testing\nm/b\t \t \n")
	require.NoError(t, err)
	assert.Equal(t, []Package{
		{ImportPath: "m/a", Files: []string{"a.go", "a_test.go"}, Imports: []string{"fmt", "testing"}},
		{ImportPath: "m/b", Files: []string{}, Imports: []string{}},
	}, pkgs)
	_, err = ParseList("garbage\n")
	assert.Error(t, err)
}

// TestRunCompilesEveryTargetWithTheReleaseFlagsThenVets: one go list
// -export per target with the release build's flags and CGO off, then the
// planned vets; a compile failure stops it with exit 1.
func TestRunCompilesEveryTargetWithTheReleaseFlagsThenVets(t *testing.T) {
	t.Parallel()
	var calls []string
	fake := func(_ context.Context, env []string, args ...string) (string, error) {
		calls = append(calls, strings.Join(env, " ")+" | "+strings.Join(args, " "))
		if args[0] == "list" {
			return "m/a\ta.go\tfmt\n", nil
		}
		return "", nil
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-targets", "linux/amd64 linux/arm64 windows/amd64", "./..."}, nil, &out, &errOut, fake)
	require.Equal(t, 0, code, errOut.String())
	listArgs := "list -trimpath -buildvcs=false -export -f " + listTemplate + " ./..."
	assert.Equal(t, []string{
		"GOOS=linux GOARCH=amd64 CGO_ENABLED=0 | " + listArgs,
		"GOOS=linux GOARCH=arm64 CGO_ENABLED=0 | " + listArgs,
		"GOOS=windows GOARCH=amd64 CGO_ENABLED=0 | " + listArgs,
		"GOOS=linux GOARCH=amd64 CGO_ENABLED=0 | vet -trimpath -buildvcs=false m/a",
		"GOOS=windows GOARCH=amd64 CGO_ENABLED=0 | vet -trimpath -buildvcs=false m/a",
	}, calls, "linux/arm64 has nothing linux/amd64 did not vet")
	assert.Contains(t, out.String(), "cross: 3 targets compiled and vetted")

	broken := func(_ context.Context, env []string, args ...string) (string, error) {
		if strings.Contains(strings.Join(env, " "), "GOARCH=arm64") {
			return "", errors.New("compile error")
		}
		return "m/a\ta.go\tfmt\n", nil
	}
	errOut.Reset()
	code = run(context.Background(), []string{"-targets", "linux/amd64 linux/arm64"}, nil, &out, &errOut, broken)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "cross: linux/arm64 does not compile")
	assert.Equal(t, 2, run(context.Background(), []string{"-targets", "linux"}, nil, &out, &errOut, fake))
}
