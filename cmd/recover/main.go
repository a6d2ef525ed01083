// Command recover is the recover-build-lock action: operator recovery of a
// quarantine (operation=recover) or of the account incident
// (operation=recover-incident). See internal/actions/recover.
package main

import (
	"context"
	"os"

	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	code := recoveraction.Main(ctx, recoveraction.Deps{Getenv: os.Getenv, Stdout: os.Stdout}, sig)
	sig.Stop()
	os.Exit(code)
}
