//go:build unix

package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// tree is the child's process group: the child is created as the leader of
// a new group whose id is its pid.
type tree struct{ pgid int }

func newTree() (*tree, error) { return &tree{}, nil }

func (t *tree) prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func (t *tree) started(p *os.Process) error {
	t.pgid = p.Pid
	return nil
}

// terminate asks the whole group to end (SIGTERM).
func (t *tree) terminate() { t.signal(syscall.SIGTERM) }

// kill ends the whole group (SIGKILL). After the leader was reaped the group
// id stays reserved while any member lives (POSIX: a process group ID is not
// reused until the group's lifetime ends), so the signal cannot reach an
// unrelated group; ESRCH (nobody left) is ignored.
func (t *tree) kill() { t.signal(syscall.SIGKILL) }

func (t *tree) signal(sig syscall.Signal) {
	if t.pgid > 0 {
		_ = syscall.Kill(-t.pgid, sig)
	}
}

func (t *tree) close() {}
