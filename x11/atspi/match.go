package atspi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/godbus/dbus/v5"
)

var busDaemon = ref{bus: "org.freedesktop.DBus", path: "/org/freedesktop/DBus"}

// apps returns the registered applications whose process is pid.
func (c *Client) apps(ctx context.Context, conn *dbus.Conn, pid int) (mine []ref, total int, calls int, err error) {
	var all []struct {
		Bus  string
		Path dbus.ObjectPath
	}
	if err := c.call(ctx, conn, registryRoot, ifaceAccessible+".GetChildren", nil, &all); err != nil {
		return nil, 0, 1, fmt.Errorf("registry: %w", err)
	}
	calls = 1
	p := newPipeline(conn, c.callTimeout)
	for _, a := range all {
		if a.Bus == "" {
			continue
		}
		c.mu.Lock()
		known, ok := c.pids[a.Bus]
		c.mu.Unlock()
		r := ref{bus: a.Bus, path: a.Path}
		if ok {
			if known == pid {
				mine = append(mine, r)
			}
			continue
		}
		p.add(busDaemon, "org.freedesktop.DBus.GetConnectionUnixProcessID", func(call *dbus.Call) {
			var got uint32
			if call.Err != nil || call.Store(&got) != nil {
				return
			}
			c.mu.Lock()
			c.pids[r.bus] = int(got)
			c.mu.Unlock()
			if int(got) == pid {
				mine = append(mine, r)
			}
		}, a.Bus)
	}
	err = p.run(ctx)
	return mine, len(all), calls + p.calls, err
}

// findWindow finds the top-level accessible of window w, with its info read.
func (c *Client) findWindow(ctx context.Context, conn *dbus.Conn, w Window, snap *Snapshot) (*node, error) {
	apps, total, calls, err := c.apps(ctx, conn, w.PID)
	snap.Calls += calls
	if err != nil {
		return nil, err
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%w: pid %d is not registered on the accessibility bus (%d applications are): a plain X client, or toolkit accessibility is off", ErrNotAccessible, w.PID, total)
	}
	wk := &walker{p: newPipeline(conn, c.callTimeout), seen: map[ref]bool{}}
	var tops []*node
	for _, app := range apps {
		wk.p.add(app, ifaceProperties+".Get", func(call *dbus.Call) {
			var v dbus.Variant
			if call.Err == nil && call.Store(&v) == nil && snap.App == "" {
				snap.App, _ = v.Value().(string)
			}
		}, ifaceAccessible, "Name")
		var kit, version string
		for prop, into := range map[string]*string{"ToolkitName": &kit, "Version": &version} {
			wk.p.add(app, ifaceProperties+".Get", func(call *dbus.Call) {
				var v dbus.Variant
				if call.Err == nil && call.Store(&v) == nil {
					*into, _ = v.Value().(string)
				}
				if kit != "" && version != "" && snap.Toolkit == "" {
					snap.Toolkit = kit + " " + version
				}
			}, ifaceApplication, prop)
		}
		wk.p.add(app, ifaceAccessible+".GetChildren", func(call *dbus.Call) {
			var kids []struct {
				Bus  string
				Path dbus.ObjectPath
			}
			if call.Err != nil || call.Store(&kids) != nil {
				return
			}
			for _, k := range kids {
				if k.Bus != app.bus { // another process's object: never this window
					continue
				}
				n := &node{ref: ref{bus: k.Bus, path: k.Path}}
				tops = append(tops, n)
				wk.info(n, func(n *node) {
					if n.ifaces&hasComponent != 0 {
						wk.p.add(n.ref, ifaceComponent+".GetExtents", func(call *dbus.Call) {
							var e extents
							if call.Err == nil && call.Store(&e) == nil {
								if r, ok := e.rect(); ok {
									n.ext = &r
								}
							}
						}, uint32(0))
					}
				})
			}
		})
	}
	err = wk.p.run(ctx)
	snap.Calls += wk.p.calls
	if err != nil {
		if errors.Is(err, ErrNotResponding) {
			return nil, fmt.Errorf("%w: pid %d did not answer within %s", ErrNotResponding, w.PID, c.callTimeout)
		}
		return nil, err
	}
	best, how := pickWindow(tops, w)
	if best == nil {
		var names []string
		for _, t := range tops {
			names = append(names, fmt.Sprintf("%s %q", t.role, t.name))
		}
		return nil, fmt.Errorf("%w: pid %d has %d top-level accessibles (%s), none matches window %d %q at %dx%d+%d+%d",
			ErrWindowNotMatched, w.PID, len(tops), strings.Join(names, ", "), w.ID, w.Title, w.Frame.Width, w.Frame.Height, w.Frame.X, w.Frame.Y)
	}
	snap.MatchedBy = how
	return best, nil
}

// showingOnWindowsOnly reports whether a toolkit (as Snapshot.Toolkit names it) sets
// StateShowing on its windows only. GTK 4.8 (Debian 12's) does: every element below a
// window reports visible, never showing; earlier 4.x are taken to do the same, later
// ones to report showing.
func showingOnWindowsOnly(toolkit string) bool {
	kit, version, _ := strings.Cut(toolkit, " ")
	if !strings.EqualFold(kit, "GTK") {
		return false
	}
	major, minor, _ := strings.Cut(version, ".")
	if major != "4" {
		return false
	}
	m, _, _ := strings.Cut(minor, ".")
	n, err := strconv.Atoi(m)
	return err == nil && n <= 8
}

// pickWindow scores the top-level accessibles against the X window: the overlap of their
// extents with the window (toolkits report the frame with decorations, so containment
// within a margin counts), the title, and being shown. The best score wins when it is
// convincing; a lone shown top level wins anyway.
func pickWindow(tops []*node, w Window) (best *node, how string) {
	var shown []*node
	score := 0.0
	for _, t := range tops {
		if !t.roleKnown || t.state.Has(StateDefunct) {
			continue
		}
		s, parts := 0.0, []string{}
		if t.ext != nil {
			if iou := overlap(*t.ext, w.Frame); iou > 0.5 {
				s += iou
				parts = append(parts, "extents")
			}
		}
		if t.name != "" && t.name == w.Title {
			s += 0.6
			parts = append(parts, "title")
		}
		if t.state.Has(StateShowing) {
			s += 0.05
			shown = append(shown, t)
		}
		if s > score {
			best, score, how = t, s, strings.Join(parts, "+")
		}
	}
	if score >= 0.6 {
		return best, how
	}
	if len(shown) == 1 {
		return shown[0], "only_shown_toplevel"
	}
	return nil, ""
}

// overlap is the intersection of a and b over their union (0–1).
func overlap(a, b Rect) float64 {
	x0, y0 := max(a.X, b.X), max(a.Y, b.Y)
	x1, y1 := min(a.X+a.Width, b.X+b.Width), min(a.Y+a.Height, b.Y+b.Height)
	if x1 <= x0 || y1 <= y0 {
		return 0
	}
	inter := float64((x1 - x0) * (y1 - y0))
	union := float64(a.Width*a.Height+b.Width*b.Height) - inter
	return inter / union
}
