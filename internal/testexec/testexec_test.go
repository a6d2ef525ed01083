//go:build unix

package testexec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoTextFileBusyWhileOthersFork writes and runs fresh executables
// while other goroutines keep forking: with os.WriteFile a run now and
// then fails with "text file busy"; with WriteFile never.
func TestNoTextFileBusyWhileOthersFork(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command(sh, "-c", ":").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 200 {
		p := filepath.Join(dir, fmt.Sprintf("tool-%d", i))
		require.NoError(t, WriteFile(p, []byte("#!"+sh+"\nexit 0\n"), 0o755))
		require.NoError(t, exec.Command(p).Run(), "run %d", i)
	}
}

func TestCopyRefusesAnExistingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tool")
	require.NoError(t, os.WriteFile(p, nil, 0o755))
	require.ErrorIs(t, Copy(p, nil, 0o755), os.ErrExist)
}
