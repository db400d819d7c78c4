package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ControlPlaneCPU returns the CPU time (user and system) kube-apiserver and etcd of this
// control plane have used since they started, read from /proc: for a benchmark that says
// what its requests cost the control plane, which runs apart from the test binary. It finds
// the processes by the flags envtest started them with (the API server's --secure-port,
// etcd's --listen-client-urls), so another test binary's control plane is not counted.
func (e *Env) ControlPlaneCPU() (apiserver, etcd time.Duration, err error) {
	api := e.env.ControlPlane.APIServer
	if api == nil || api.Port == "" || e.env.ControlPlane.Etcd == nil || e.env.ControlPlane.Etcd.URL == nil {
		return 0, 0, fmt.Errorf("control plane not started")
	}
	apiPID, err := findProcess("kube-apiserver", "--secure-port="+api.Port)
	if err != nil {
		return 0, 0, err
	}
	etcdPID, err := findProcess("etcd", "--listen-client-urls="+e.env.ControlPlane.Etcd.URL.String())
	if err != nil {
		return 0, 0, err
	}
	if apiserver, err = processCPU(apiPID); err != nil {
		return 0, 0, err
	}
	if etcd, err = processCPU(etcdPID); err != nil {
		return 0, 0, err
	}
	return apiserver, etcd, nil
}

// findProcess returns the process whose program is named name and whose arguments include
// arg.
func findProcess(name, arg string) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue // ended meanwhile, or not ours to read
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		if filepath.Base(args[0]) != name {
			continue
		}
		for _, a := range args[1:] {
			if a == arg {
				return strconv.Atoi(filepath.Base(dir))
			}
		}
	}
	return 0, fmt.Errorf("no %s process with %s", name, arg)
}

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ): 100 a second on every Linux
// architecture Go supports.
const clockTicks = 100

// processCPU returns the user and system CPU time of process pid.
func processCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: the fields after
	// the last ')' start with field 3, the state; utime and stime are fields 14 and 15.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
