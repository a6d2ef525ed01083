// Command audit-enrollment audits enrolled repositories, keeps the drift
// issue and opens onboarding pull requests (internal/policy/enroll).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := enroll.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, monitor.Deps{})
	stop()
	os.Exit(enroll.ExitCode(err))
}
