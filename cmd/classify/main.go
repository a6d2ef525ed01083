// Command classify runs the classifier actions; its one argument is the
// mode (internal/actions/classify.Modes), e.g. "classify changes".
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classify"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	err := classify.Run(ctx, classify.Modes, os.Args[1:], actionkit.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig})
	sig.Stop()
	os.Exit(lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err))
}
