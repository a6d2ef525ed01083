// Command reap is the reap-stale-locks action: the scheduled reaper of the
// build lock, and (operation=recover or recover-incident) operator recovery.
// See internal/actions/reap.
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	code := reap.Main(ctx, reap.Deps{Getenv: os.Getenv, Stdout: os.Stdout}, sig)
	sig.Stop()
	os.Exit(code)
}
