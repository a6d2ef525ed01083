// Command cross proves that every package of the module compiles for every
// release target and passes go vet there, for a fraction of the cost of
// `go build ./... && go vet ./...` per target (docs/packaging.md,
// "Cross-compilation"; run by make cross, part of make test).
//
// Usage:
//
//	go run ./tools/cross [-targets "linux/amd64 linux/arm64 ..."] [packages]
//
// For each target it runs `go list -export` over the packages: the compiler
// compiles (and so type-checks) every package, main packages included,
// without linking throw-away binaries (the release binaries are linked by
// make dist; make test links one command for all six targets in the
// release workflow run under act). Then it vets: every package on the first
// architecture of each operating system, and on the other architecture
// only the packages that could be judged differently there (PlanVet).
//
// Everything is built with the release build's flags (CGO_ENABLED=0,
// -trimpath, -buildvcs=false), so the compiled packages in the build cache
// are the ones make dist, the release path test and the release workflow
// under act link from: they compile nothing again.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// releaseFlags are make dist's compile flags (tools/launcher/build-dist.sh);
// the link flags do not change what is compiled.
var releaseFlags = []string{"-trimpath", "-buildvcs=false"}

// goFunc runs the go command with extra environment and returns its
// standard output; a failure carries its standard error.
type goFunc func(ctx context.Context, env []string, args ...string) (string, error)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil))
}

func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, goCmd goFunc) int {
	fs := flag.NewFlagSet("cross", flag.ContinueOnError)
	fs.SetOutput(stderr)
	targetsFlag := fs.String("targets", "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64", "GOOS/GOARCH pairs, space-separated")
	goBin := fs.String("go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	targets, err := ParseTargets(*targetsFlag)
	if err != nil {
		fmt.Fprintln(stderr, "cross:", err)
		return 2
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	if goCmd == nil {
		goCmd = execGo(*goBin, environ, stderr)
	}
	start := time.Now()
	listings := map[Target][]Package{}
	for _, t := range targets {
		t0 := time.Now()
		out, err := goCmd(ctx, targetEnv(t), append(append([]string{"list"}, releaseFlags...), append([]string{"-export", "-f", listTemplate}, pkgs...)...)...)
		if err != nil {
			fmt.Fprintf(stderr, "cross: %s does not compile: %v\n", t, err)
			return 1
		}
		if listings[t], err = ParseList(out); err != nil {
			fmt.Fprintln(stderr, "cross:", err)
			return 1
		}
		fmt.Fprintf(stdout, "cross: %s compiled %d packages (%s)\n", t, len(listings[t]), time.Since(t0).Round(100*time.Millisecond))
	}
	for _, job := range PlanVet(targets, listings) {
		t0 := time.Now()
		if _, err := goCmd(ctx, targetEnv(job.Target), append(append([]string{"vet"}, releaseFlags...), job.Packages...)...); err != nil {
			fmt.Fprintf(stderr, "cross: go vet for %s failed: %v\n", job.Target, err)
			return 1
		}
		fmt.Fprintf(stdout, "cross: %s vetted (%s; %s)\n", job.Target, job.Reason, time.Since(t0).Round(100*time.Millisecond))
	}
	fmt.Fprintf(stdout, "cross: %d targets compiled and vetted in %s\n", len(targets), time.Since(start).Round(100*time.Millisecond))
	return 0
}

func targetEnv(t Target) []string {
	return []string{"GOOS=" + t.GOOS, "GOARCH=" + t.GOARCH, "CGO_ENABLED=0"}
}

// execGo runs the real go command; vet's findings and compile errors go
// to stderr as they happen.
func execGo(goBin string, environ []string, stderr io.Writer) goFunc {
	return func(ctx context.Context, env []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Env = append(append([]string{}, environ...), env...)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("go %s: %w", strings.Join(args[:1], " "), err)
		}
		return out.String(), nil
	}
}
