package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `usage: buildlock <command> [flags]

commands:
  demo       run the main job on the embedded GitHub emulator (make demo)
  bench      measure the demo workload: API requests per admission, 304 share, handoff gap (make bench)
  emulator   serve the GitHub emulator over HTTP and print its connection details as one JSON line
  status     show holders, queue, reservations and the incident of one lock (table|json|markdown)
  init       write a new lock's config (and caller policy) into a lock repository and print the remaining steps
  doctor     check a lock repository's installation: Apps, permissions, branches, configs, reaper
  upgrade    show a lock's pending schema upgrade: what it waits for, who holds and waits, and from which client
  policy     policy check [path]: the organization's workflow policy on a local checkout (docs/enrollment.md)
  history    verify every past state of a lock (history verify) and report seat demand with a what-if replay (history report)
  version    print the version

Run "buildlock <command> -h" for a command's flags.
`

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(ctx, args[1:], stdout, stderr)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "emulator":
		err = runEmulator(ctx, args[1:], stdout, stderr)
	case "status":
		err = runStatus(ctx, args[1:], stdout, stderr)
	case "init":
		err = runInit(ctx, args[1:], stdout, stderr)
	case "doctor":
		err = runDoctor(ctx, args[1:], stdout, stderr)
	case "upgrade":
		err = runUpgrade(ctx, args[1:], stdout, stderr)
	case "policy":
		err = runPolicy(ctx, args[1:], stdout, stderr)
	case "history":
		err = runHistory(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "buildlock", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "buildlock: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(stderr, "buildlock %s: %v\n", args[0], err)
		return 1
	}
}

var errUsage = errors.New("usage error")
