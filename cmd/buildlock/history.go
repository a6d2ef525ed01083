package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/historycli"
)

// runHistory implements `buildlock history verify|report`
// (internal/historycli, docs/history.md). A usage error exits 2; a report
// that is not a pass (violations, an incomplete history) exits 1 after the
// report was written.
func runHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return historyCommand(ctx, args, os.Getenv, stdout, stderr, historycli.Deps{})
}

func historyCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps historycli.Deps) error {
	err := historycli.Main(ctx, args, getenv, stdout, stderr, deps)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return flag.ErrHelp
	case errors.Is(err, historycli.ErrUsage):
		if err != historycli.ErrUsage {
			fmt.Fprintln(stderr, "buildlock history:", err)
		}
		return errors.Join(errUsage, err)
	}
	return err
}
