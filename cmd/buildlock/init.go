package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockinit"
)

// runInit implements `buildlock init --lock NAME --seats N [--dir .]`: in a
// fork or mirror of the build lock repository it writes the lock config
// (and locks/policy.json with --owner-id), checks the reaper and recover
// workflows, and prints the steps that remain by hand with the doctor
// command (internal/lockinit, docs/adopting.md). It refuses to replace a
// file that differs without --force, and writes nothing when any check
// fails.
func runInit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("buildlock init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o lockinit.Options
	fs.StringVar(&o.Lock, "lock", "", "lock name, as the consumers' lock-name input (required)")
	fs.IntVar(&o.Seats, "seats", 0, "number of licensed seats, maxHolders (required, 1-64)")
	dir := fs.String("dir", ".", "the lock repository checkout (a fork or mirror of the build lock repository)")
	fs.Int64Var(&o.OwnerID, "owner-id", 0, "pin the lock repository owner's numeric id in locks/policy.json (gh api orgs/OWNER --jq .id)")
	fs.StringVar(&o.Repository, "repository", "", "OWNER/NAME of the lock repository, to fill in the printed commands")
	fs.BoolVar(&o.Force, "force", false, "replace files that exist with other content")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: buildlock init --lock NAME --seats N [--dir .] [--owner-id ID] [--repository OWNER/NAME] [--force]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	files, err := lockinit.Plan(o)
	if err != nil {
		fs.Usage()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := lockinit.CheckWorkflows(*dir); err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	status, err := lockinit.Apply(*dir, files, o.Force)
	if err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	var paths []string
	for i, f := range files {
		fmt.Fprintf(stdout, "%-11s %s\n", status[i], f.Path)
		paths = append(paths, f.Path)
	}
	fmt.Fprintf(stdout, "%-11s %s and %s run this repository's own actions\n", "checked", lockinit.ReaperWorkflowPath, lockinit.RecoverWorkflowPath)
	fmt.Fprintf(stdout, "\nThe lock %q has %d seat(s) and every protection on (schema 6): runner serialization, resource lifecycle\n"+
		"(cooldowns and quarantines), account health (the 20111 incident), fencing tokens and bounded overtaking.\n"+
		"Its first acquire creates the state file at that schema; nothing needs to be seeded.\n", o.Lock, o.Seats)
	if o.Repository == "" {
		fmt.Fprintln(stdout, "(Pass --repository OWNER/NAME to fill in the commands below.)")
	}
	fmt.Fprint(stdout, "\n"+lockinit.NextSteps(o, paths))
	return nil
}
