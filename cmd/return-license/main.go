// Command return-license runs the return-unity-license action.
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/returnlicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	err := returnlicense.Run(ctx, returnlicense.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig})
	sig.Stop()
	os.Exit(lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err))
}
