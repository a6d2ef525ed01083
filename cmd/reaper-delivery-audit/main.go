// Command reaper-delivery-audit is the Reaper delivery audit: it classifies
// the latest scheduled runs of the reaper and keeps one operational issue
// open while delivery is outside its SLO. See internal/monitor/deliveryaudit.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/deliveryaudit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := deliveryaudit.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, monitor.Deps{})
	stop()
	os.Exit(monitor.ExitCode(err))
}
