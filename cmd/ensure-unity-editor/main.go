// Command ensure-unity-editor runs the ensure-unity-editor action.
package main

import (
	"context"
	"os"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/ensureeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	err := ensureeditor.Run(ctx, ensureeditor.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig})
	sig.Stop()
	os.Exit(lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err))
}
