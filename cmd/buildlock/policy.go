package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/check"
)

// runPolicy is `buildlock policy check [path]` (internal/policy/check).
func runPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprint(stderr, "usage: buildlock policy check [flags] [path]\n")
		return errUsage
	}
	err := check.Main(ctx, args[1:], stdout, stderr, time.Now)
	if errors.Is(err, check.ErrUsage) {
		fmt.Fprintln(stderr, "buildlock policy check:", err)
		return errUsage
	}
	return err
}
