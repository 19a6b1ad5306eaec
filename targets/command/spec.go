package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Spec is the command target's part of a job definition.
type Spec struct {
	// Argv is the program and its arguments, run without a shell. With
	// Shell, it is one string: a script for /bin/sh -c.
	Argv []string `json:"argv"`
	// Shell runs Argv[0] as a /bin/sh script.
	Shell bool `json:"shell,omitempty"`
	// Dir is the absolute working directory; "" means the server's.
	Dir string `json:"dir,omitempty"`
	// Env is added to the base environment, overriding it where they share
	// a name.
	Env map[string]string `json:"env,omitempty"`
	// MaxMemoryMB caps the memory of an attempt, in MiB; 0 means no cap.
	// Where the server's cgroup has the memory controller it is the
	// attempt's cgroup's memory.max: all its processes together, tmpfs
	// files (/dev/shm) and page cache included, and going over it kills
	// the attempt. Elsewhere it caps the address space (RLIMIT_AS) of each
	// process, which counts virtual memory, so a runtime that reserves
	// more than it uses (a JVM, a large heap) needs a figure above its
	// reservation.
	MaxMemoryMB int `json:"max_memory_mb,omitempty"`
	// MaxProcesses caps the processes and threads an attempt has at once
	// (the cgroup's pids.max); 0 means the server's default. Only a server
	// whose cgroup has the pids controller can enforce it.
	MaxProcesses int `json:"max_processes,omitempty"`
}

// maxMemoryMB bounds max_memory_mb at 1 TiB, far above any machine Sundial
// runs commands on, so a typo of extra zeros is an error, not "no limit".
const maxMemoryMB = 1 << 20

// maxProcesses bounds max_processes at the kernel's largest pid_max.
const maxProcesses = 1 << 22

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseSpec decodes a spec strictly and checks every field, so Check and
// Launch refuse the same specs. It cannot check that the program exists:
// configs are validated on machines other than the one that runs them.
func parseSpec(raw json.RawMessage) (Spec, error) {
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("command: bad spec: %v", err)
	}
	if dec.More() {
		return spec, fmt.Errorf("command: bad spec: more than one JSON value")
	}
	switch {
	case len(spec.Argv) == 0:
		return spec, fmt.Errorf("command: argv is missing")
	case spec.Shell && len(spec.Argv) != 1:
		return spec, fmt.Errorf("command: with shell: true, argv must be one string (the script), not %d", len(spec.Argv))
	case spec.Argv[0] == "":
		return spec, fmt.Errorf("command: argv[0] is empty")
	}
	for i, a := range spec.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return spec, fmt.Errorf("command: argv[%d] holds a NUL byte", i)
		}
	}
	if spec.Dir != "" && (!filepath.IsAbs(spec.Dir) || strings.IndexByte(spec.Dir, 0) >= 0) {
		return spec, fmt.Errorf("command: bad dir %q: want an absolute path", spec.Dir)
	}
	for name, value := range spec.Env {
		switch {
		case !envName.MatchString(name):
			return spec, fmt.Errorf("command: bad env name %q: want letters, digits and _, not starting with a digit", name)
		case strings.HasPrefix(name, "SUNDIAL_"):
			return spec, fmt.Errorf("command: env %s: the SUNDIAL_* variables are set by Sundial", name)
		case strings.IndexByte(value, 0) >= 0:
			return spec, fmt.Errorf("command: env %s: the value holds a NUL byte", name)
		}
	}
	if spec.MaxMemoryMB < 0 || spec.MaxMemoryMB > maxMemoryMB {
		return spec, fmt.Errorf("command: bad max_memory_mb %d: want 0 (no limit) to %d", spec.MaxMemoryMB, maxMemoryMB)
	}
	if spec.MaxProcesses < 0 || spec.MaxProcesses > maxProcesses {
		return spec, fmt.Errorf("command: bad max_processes %d: want 0 (the server's default) to %d", spec.MaxProcesses, maxProcesses)
	}
	return spec, nil
}
