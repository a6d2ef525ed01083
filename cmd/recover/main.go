// Command recover is the recover-build-lock action: operator recovery of a
// quarantine (operation=recover) or of the account incident
// (operation=recover-incident). See internal/actions/recover.
package main

import (
	"context"
	"os"

	recovery "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func main() {
	ctx, sig := lockaction.NotifyContext(context.Background())
	code := recovery.Main(ctx, recovery.Deps{Getenv: os.Getenv, Stdout: os.Stdout}, sig)
	sig.Stop()
	os.Exit(code)
}
