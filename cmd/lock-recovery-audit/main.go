// Command lock-recovery-audit is the Build lock incident recovery audit: it
// classifies committed lock state and keeps one alert issue carrying the
// exact recover-incident inputs. See internal/monitor/incidentaudit.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/incidentaudit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := incidentaudit.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, monitor.Deps{})
	stop()
	os.Exit(monitor.ExitCode(err))
}
