// Command require-confirmed-unity-cleanup runs the
// require-confirmed-unity-cleanup action.
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupgate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	err := cleanupgate.Run(ctx, cleanupgate.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig})
	sig.Stop()
	os.Exit(lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err))
}
