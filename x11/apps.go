package x11

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/cua-host/cua-host/internal/procfs"
)

// App is a process that owns at least one top-level window.
type App struct {
	PID int `json:"pid"`
	// Name is the executable's base name (or /proc/PID/comm when exe is unreadable).
	Name string `json:"name"`
	// Executable is /proc/PID/exe resolved; "" when unreadable.
	Executable string   `json:"executable"`
	Windows    []uint32 `json:"window_ids"`
	Focused    bool     `json:"focused"`
}

// Apps groups the top-level windows by owning pid. Windows with no known pid are left out.
func (b *Backend) Apps(ctx context.Context) ([]App, error) {
	wins, err := b.Windows(ctx)
	if err != nil {
		return nil, err
	}
	byPID := map[int]*App{}
	for _, w := range wins {
		if w.PID <= 0 {
			continue
		}
		a := byPID[w.PID]
		if a == nil {
			a = &App{PID: w.PID}
			a.Executable, a.Name = ProcessExecutable(w.PID)
			byPID[w.PID] = a
		}
		a.Windows = append(a.Windows, w.ID)
		a.Focused = a.Focused || w.Focused
	}
	out := make([]App, 0, len(byPID))
	for _, a := range byPID {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// ProcessExecutable returns the resolved /proc/PID/exe and a short name for pid.
func ProcessExecutable(pid int) (exe, name string) {
	exe, _ = procfs.Exe(pid)
	if exe != "" {
		return exe, filepath.Base(exe)
	}
	return exe, procfs.Comm(pid)
}

// ProcessAlive reports whether a process with pid exists (and is not a zombie).
func ProcessAlive(pid int) bool { return procfs.Alive(pid) }
