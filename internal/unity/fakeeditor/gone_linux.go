//go:build linux

package fakeeditor

import (
	"time"

	"golang.org/x/sys/unix"
)

// Gone reports whether pid has terminated (exited, possibly a zombie nobody
// reaped), waiting up to a minute for it. A process closes its files a
// moment before it becomes a zombie, so a test that saw the output pipe
// close must wait for the termination itself: a pidfd (Linux 5.3+) becomes
// readable exactly then, so this blocks on the event and never polls
// /proc. A process still running after the guard is reported as not gone.
func Gone(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(time.Minute/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}
