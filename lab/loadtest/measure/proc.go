package measure

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What /proc says of a process and its children: the CPU and memory of a
// tree of processes, such as a PostgreSQL server's postmaster and its
// backends, which the benchmarks count beside their own.

// ProcTree lists the postmaster and its children (the backends and
// background workers), whose CPU and memory are PostgreSQL's.
func ProcTree(root int) []int {
	pids := []int{root}
	// The postmaster is single-threaded, so its one task's children file
	// names them all, without reading every process's stat.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", root, root)); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return pids
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if st, ok := ReadStat(pid); ok && st.PPID == root {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ProcStat holds the fields of /proc/PID/stat that the harness reads.
type ProcStat struct {
	PPID int
	// CPU is user+system time in seconds; ChildCPU the same of the
	// children it has waited for.
	CPU, ChildCPU float64
}

// ReadStat reads /proc/PID/stat (pid 0: this process).
func ReadStat(pid int) (ProcStat, bool) {
	name := "/proc/self/stat"
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return ProcStat{}, false
	}
	return ParseStat(string(b))
}

// ClockTick is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const ClockTick = 100

// ParseStat reads the fields after the command name, which may itself
// hold spaces and parentheses: field 4 is ppid, 14-17 utime, stime,
// cutime, cstime.
func ParseStat(s string) (ProcStat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ProcStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return ProcStat{}, false
	}
	var n [5]uint64
	for j, k := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseUint(f[k], 10, 64)
		if err != nil {
			return ProcStat{}, false
		}
		n[j] = v
	}
	return ProcStat{
		PPID:     int(n[0]),
		CPU:      float64(n[1]+n[2]) / ClockTick,
		ChildCPU: float64(n[3]+n[4]) / ClockTick,
	}, true
}

// TreeCPU is the CPU seconds the postmaster and its children have used:
// the living processes' own, and what the postmaster reaped from the ended
// ones.
func TreeCPU(root int) float64 {
	var sum float64
	for _, pid := range ProcTree(root) {
		st, ok := ReadStat(pid)
		if !ok {
			continue
		}
		sum += st.CPU
		if pid == root {
			sum += st.ChildCPU
		}
	}
	return sum
}

// TreeMemory is the summed resident and proportional set sizes of the
// postmaster and its children, in bytes. RSS counts the shared buffers
// once in every process that touched them; PSS splits shared pages among
// the processes that map them, so its sum counts them once.
func TreeMemory(root int) (rss, pss uint64) {
	for _, pid := range ProcTree(root) {
		rss += ProcField(pid, "status", "VmRSS:")
		pss += ProcField(pid, "smaps_rollup", "Pss:")
	}
	return rss, pss
}

// ProcField reads a "Name:   N kB" line of /proc/PID/file (pid 0: this
// process), in bytes; 0 where it cannot.
func ProcField(pid int, file, field string) uint64 {
	name := "/proc/self/" + file
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/" + file
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, field)
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
