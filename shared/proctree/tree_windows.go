package proctree

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysTree is the job object that holds the tree.
type sysTree struct {
	mu  sync.Mutex
	job windows.Handle // 0 before Start and after Close
}

func (t *Tree) start() error {
	job, err := newJob()
	if err != nil {
		return err
	}
	attr := t.cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
		t.cmd.SysProcAttr = attr
	}
	// Suspended until it is in the job: nothing it starts can escape the job.
	attr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := t.cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return err
	}
	if err := enterJob(job, t.cmd.Process.Pid); err != nil {
		_ = t.cmd.Process.Kill()
		_ = t.cmd.Wait()
		windows.CloseHandle(job)
		return fmt.Errorf("proctree: %w", err)
	}
	t.sys.mu.Lock()
	t.sys.job = job
	t.sys.mu.Unlock()
	return nil
}

// newJob makes a job object that kills its processes when its last handle closes.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("proctree: create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("proctree: set up job object: %w", err)
	}
	return job, nil
}

// enterJob puts the suspended process pid into job, then resumes it.
func enterJob(job windows.Handle, pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	err = windows.AssignProcessToJobObject(job, p)
	windows.CloseHandle(p)
	if err != nil {
		return fmt.Errorf("assign process %d to its job object: %w", pid, err)
	}
	return resume(uint32(pid))
}

// resume resumes the threads of a process created suspended (it has one, its main thread).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d of process %d: %w", entry.ThreadID, pid, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume process %d: %w", pid, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("list threads: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("resume process %d: no thread found", pid)
	}
	return nil
}

// stop kills the tree: see Tree.Stop.
func (t *Tree) stop() error { return t.kill() }

func (t *Tree) kill() error {
	t.sys.mu.Lock()
	defer t.sys.mu.Unlock()
	if t.sys.job == 0 {
		if t.cmd.Process == nil {
			return errors.New("proctree: not started")
		}
		return t.cmd.Process.Kill() // Close was called: only the child is left to kill
	}
	if err := windows.TerminateJobObject(t.sys.job, 1); err != nil {
		return fmt.Errorf("proctree: terminate job object: %w", err)
	}
	return nil
}

func (t *Tree) close() error {
	t.sys.mu.Lock()
	defer t.sys.mu.Unlock()
	if t.sys.job == 0 {
		return nil
	}
	err := windows.CloseHandle(t.sys.job)
	t.sys.job = 0
	return err
}
