package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MaxFileSize bounds a config file: a project of 100,000 jobs fits in a
// few megabytes, and a file past the bound is refused before it is read
// whole, whatever it is.
const MaxFileSize = 16 << 20

// ReadFile reads one config file. It reads only a regular file, and only
// up to MaxFileSize: a symbolic link (to /dev/zero, /etc/passwd, another
// project's secrets), a FIFO (which would block the read for ever) or a
// device is refused, and so is anything larger, before its contents are
// read; the error names the path and what it is, never what it holds.
func ReadFile(path string) ([]byte, error) {
	// O_NOFOLLOW refuses a link at the last step of path; O_NONBLOCK
	// returns at once from opening a FIFO no one writes to. Checking what
	// was opened, not what path named a moment before, leaves no window
	// to swap the file in between.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: a symbolic link; Sundial reads only regular files", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s); Sundial reads only regular files", path, fileType(info.Mode()))
	}
	if info.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a config file may have", path, info.Size(), MaxFileSize)
	}
	// The file may grow after Stat: read one byte past the bound to know.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: more than the %d bytes a config file may have", path, MaxFileSize)
	}
	return data, nil
}

// fileType names what a file that is not a regular one is.
func fileType(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// File is one project's config file as read from a source.
type File struct {
	Path    string // in the directory, or in the repo
	Project string
	Data    []byte
	Link    string // to the file at its commit, from --config-link; "" if none
	// ICS are the .ics files beside it, by name, which its calendars may
	// read; every file of a directory shares one map.
	ICS map[string]ICSFile
	// Err is why the file cannot be used: it could not be read, or another
	// file in the directory names the same project.
	Err error
}

// ReadDir reads the config files (*.yaml, *.yml) directly in dir, by
// project id, with ReadFile. Hidden files and subdirectories are left out.
// It fails only when the directory itself cannot be listed; a file that
// cannot be read, or is not a regular file, is a File with Err set, so
// that one bad file holds up only its own project.
func ReadDir(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byProject := map[string][]File{}
	var ics map[string]ICSFile
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".ics") && e.Name()[0] != '.' && !e.IsDir() {
			if ics == nil {
				ics = map[string]ICSFile{}
			}
			data, err := ReadFile(filepath.Join(dir, e.Name()))
			ics[e.Name()] = ICSFile{Data: data, Err: err}
		}
	}
	for _, e := range entries {
		project, ok := ProjectOf(e.Name())
		if !ok || e.Name()[0] == '.' || e.IsDir() {
			continue
		}
		f := File{Path: filepath.Join(dir, e.Name()), Project: project, ICS: ics}
		f.Data, f.Err = ReadFile(f.Path)
		byProject[project] = append(byProject[project], f)
	}
	var files []File
	for _, fs := range byProject {
		if len(fs) > 1 {
			for i := range fs {
				fs[i].Err = &Error{File: fs[i].Path, Msg: fmt.Sprintf("project %s has %d config files here (%s and %s): keep one", fs[i].Project, len(fs), filepath.Base(fs[0].Path), filepath.Base(fs[1].Path))}
			}
		}
		files = append(files, fs...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}
