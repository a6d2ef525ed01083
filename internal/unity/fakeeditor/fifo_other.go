//go:build !unix

package fakeeditor

import "testing"

// ReadyPipe needs a FIFO; on this platform the calling test is skipped.
func ReadyPipe(t testing.TB, _ string) func() (pid, grandchild int) {
	t.Skip("the ready pipe is a FIFO (Unix only)")
	return nil
}
