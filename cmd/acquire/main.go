// Command acquire runs the acquire-build-lock, acquire-build-lock-with-cleanup (main and post) by BUILD_LOCK_MODE action.
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	err := acquire.Run(ctx, acquire.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig})
	sig.Stop()
	code := lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err)
	if os.Getenv(acquire.EnvMode) == acquire.ModePostCleanup {
		code = lockaction.ExitOK // the post step never fails the job (spec §1.3)
	}
	os.Exit(code)
}
