//go:build windows

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tree is a Job Object holding the child and everything it starts. The job
// kills every member when its last handle closes
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so even a crash of this process ends
// the tree; breakaway is not allowed.
// https://learn.microsoft.com/windows/win32/procthread/job-objects
type tree struct{ job windows.Handle }

func newTree() (*tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("set job limits: %w", err)
	}
	return &tree{job: job}, nil
}

// prepare creates the child suspended, so it cannot start a process before
// it is in the job.
func (t *tree) prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP, HideWindow: true}
}

// started assigns the suspended child to the job, then resumes its threads.
// The runner may itself run the step inside a job; since Windows 8 jobs
// nest, so the assignment still succeeds
// (https://learn.microsoft.com/windows/win32/procthread/nested-jobs).
func (t *tree) started(p *os.Process) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return fmt.Errorf("open process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(t.job, h); err != nil {
		return fmt.Errorf("assign process to job: %w", err)
	}
	return resumeThreads(uint32(p.Pid))
}

// resumeThreads resumes every thread of pid (a process created with
// CREATE_SUSPENDED has exactly one). os/exec does not expose the thread
// handle CreateProcess returned (https://github.com/golang/go/issues/32404),
// so the threads are found by a Tool Help snapshot.
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("thread snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread: %w", err)
		}
		_, rerr := windows.ResumeThread(th)
		windows.CloseHandle(th)
		if rerr != nil {
			return fmt.Errorf("resume thread: %w", rerr)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d found to resume", pid)
	}
	return nil
}

// terminate ends the whole job: Windows has no termination request a
// console-less batch process must honor, and the reference's child.kill()
// is TerminateProcess too.
func (t *tree) terminate() { t.kill() }

// kill ends every process in the job.
func (t *tree) kill() { _ = windows.TerminateJobObject(t.job, 1) }

func (t *tree) close() { windows.CloseHandle(t.job) }
