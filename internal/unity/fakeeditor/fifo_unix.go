//go:build unix

package fakeeditor

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadyPipe creates the FIFO hang modes report on under tempDir (the
// editor's TEMP) and returns a function that blocks until the fake wrote
// its own and its grandchild's pids: a test knows both processes run
// without polling.
func ReadyPipe(t testing.TB, tempDir string) func() (pid, grandchild int) {
	t.Helper()
	p := filepath.Join(tempDir, ReadyFIFO)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return func() (int, int) {
		f, err := os.Open(p) // blocks until the fake opens the write end
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var pid, child int
		if _, err := fmt.Sscanf(line, "%d %d", &pid, &child); err != nil {
			t.Fatal(err)
		}
		return pid, child
	}
}
