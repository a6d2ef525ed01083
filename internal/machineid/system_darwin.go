//go:build darwin

package machineid

import (
	"context"
	"os/exec"
	"time"
)

// ioregTimeout bounds one ioreg run (it answers in milliseconds).
const ioregTimeout = 10 * time.Second

// System returns the machine id Reader of this OS: IOPlatformUUID from
// /usr/sbin/ioreg (see the package comment for why not IOKit). Never run
// by this project's tests (docs/machine-queue.md).
func System() Reader {
	return IOReg{Run: func(ctx context.Context) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, ioregTimeout)
		defer cancel()
		return exec.CommandContext(ctx, IORegCommand[0], IORegCommand[1:]...).Output()
	}}
}
