//go:build !unix && !windows

package proc

import (
	"errors"
	"os"
	"os/exec"
)

type tree struct{}

func newTree() (*tree, error) {
	return nil, errors.New("process-tree control is not implemented on this platform")
}
func (t *tree) prepare(*exec.Cmd)         {}
func (t *tree) started(*os.Process) error { return nil }
func (t *tree) terminate()                {}
func (t *tree) kill()                     {}
func (t *tree) close()                    {}
