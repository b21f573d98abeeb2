package worker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// Desktop is the part of the desktop backend the authorizer consults to resolve a call's
// target: which process owns a window, which window lies under a point, which window has
// the focus. *x11.Backend implements it. When Config.NewRegistry returns a closer that
// implements Desktop, the authorizer uses it; without one, calls that name windows are
// refused with unsupported (fail closed: no window, no decision).
type Desktop interface {
	// Window describes one top-level window by id (x11.ErrWindowNotFound when absent).
	Window(ctx context.Context, id uint32) (x11.Window, error)
	// Windows lists the top-level windows, top-most first.
	Windows(ctx context.Context) ([]x11.Window, error)
	// Pointer returns the pointer position in root coordinates.
	Pointer(ctx context.Context) (x11.Point, error)
}

// infrastructureFinder is implemented by desktops that can name the processes the display
// runs on (*x11.Backend): they are protected like cua-host's own.
type infrastructureFinder interface {
	Infrastructure(ctx context.Context) (x11.Infrastructure, error)
}

// Decoration margins: a window's frame is its client area; the window manager's title bar
// and borders lie around it. A point this close to a protected window counts as on it.
const (
	decorationTop  = 40
	decorationSide = 8
)

// resolver turns a call's arguments into the concrete resource it touches. It reads the
// arguments only to find the resource; what it finds comes from the X server and /proc.
type resolver struct {
	desk    Desktop // nil without a display: window targets are refused
	protect *protector
	selfPID int
	procs   procCache
	// pinnable lists the tools that declare Touches.Window: a call that names only a pid
	// (or nothing, for keyboard input) gets the window the decision was made for written
	// into its arguments, so the handler acts on exactly that window.
	pinnable map[string]bool
	// touches is what each registered tool declares it touches (tool.Tool.Touches), by
	// name: the only source of the per-tool facts resolution reads.
	touches map[string]tool.Touches
}

// resolution is a resolved target plus the arguments to pin.
type resolution struct {
	authz.Target
	// pinPID and pinWindow, when pinWindow != 0, are the window chosen for a call that
	// named none: written into its decoded struct (tool.Call.Pinned).
	pinPID    int
	pinWindow uint32
	// frame is the resolved window's client area in root coordinates.
	frame x11.Rect
	// win, when hasWin is set, is the one window the call targets as the desktop described
	// it while resolving; the handler gets it (tool.Call.Window) instead of looking it up
	// again. It is held by value: resolving allocates nothing for it.
	win    x11.Window
	hasWin bool
	// files are the files the call's path arguments name, as decided (withFiles); the
	// handler gets them (tool.Call.Files).
	files []tool.File
	// at is what the server said lay at the call's points (tool.Call.AtPoints); empty
	// when it was not asked.
	at tool.AtPoints
}

func unresolved(code authz.Code, format string, args ...any) resolution {
	return refused(authz.Refuse(code, format, args...))
}

// refused is the resolution of a call refused with r before anything is decided.
func refused(r *authz.Refusal) resolution {
	return resolution{Target: authz.Target{Unresolved: r}}
}

// resolve finds what a call touches. e may be nil (an unclassified tool): then only the
// generic pid and window_id arguments are checked against the hard invariants. t is the
// registered tool (nil when none): the call's arguments are decoded once into the struct
// it declares, and the target is read from that value (callArgs). The files a call names
// are further resources (resolve_files.go).
func (r *resolver) resolve(ctx context.Context, s *session, name string, e *authz.Entry, t *tool.Tool, args map[string]any) (resolution, callArgs) {
	pid, wid, refusal := validTarget(args)
	if refusal != nil {
		return refused(refusal), callArgs{}
	}
	c := decodeCall(t, args, pid, wid)
	res := r.resolveTarget(ctx, s, name, e, &c)
	if e == nil {
		return res, c
	}
	return r.withFiles(r.touches[name].Files, args, &c, res), c
}

// resolveTarget finds the resource a call's tool touches (see resolve).
func (r *resolver) resolveTarget(ctx context.Context, s *session, tool string, e *authz.Entry, c *callArgs) resolution {
	pid, wid, scope := c.target.PID, c.target.WindowID, c.target.Scope
	hasPID, hasWID := pid != 0, wid != 0
	if e == nil {
		return r.generic(ctx, pid, hasPID, wid, hasWID)
	}
	switch e.Shape {
	case authz.ShapeWindow, authz.ShapePointer, authz.ShapeKeyboard:
		if r.desk == nil {
			return unresolved(authz.CodeUnsupported, "no X display is available to resolve the target of %s", tool)
		}
	}
	switch e.Shape {
	case authz.ShapeWindow:
		if !hasPID {
			return unresolved(authz.CodeInvalidArguments, "%s needs the pid of the window's process", tool)
		}
		return r.window(ctx, s, tool, e.Operation, pid, wid, hasWID, false, nil)
	case authz.ShapePointer:
		return r.withPaste(ctx, s, tool, c, r.pointer(ctx, s, tool, c, pid, hasPID, wid, hasWID, scope))
	case authz.ShapeKeyboard:
		return r.withPaste(ctx, s, tool, c, r.keyboard(ctx, s, tool, pid, hasPID, wid, hasWID, scope))
	case authz.ShapeProcess:
		if !hasPID {
			return unresolved(authz.CodeInvalidArguments, "%s needs a pid", tool)
		}
		info := r.procs.read(pid)
		if !info.alive {
			return unresolved(authz.CodeInvalidArguments, "no process with pid %d", pid)
		}
		res := resolution{Target: authz.Target{Resource: r.process(s, authz.ResourceProcess, e.Operation, pid, info)}}
		res.SelfPID = r.self(pid, info)
		return res
	case authz.ShapeExecutable:
		return r.executable(tool, c)
	case authz.ShapeDisplay:
		return resolution{Target: authz.Target{Resource: authz.Resource{Kind: authz.ResourceDisplay, Op: e.Operation}}}
	case authz.ShapeClipboard:
		return resolution{Target: authz.Target{Resource: authz.Resource{Kind: authz.ResourceClipboard, Op: e.Operation}}}
	}
	res := r.generic(ctx, pid, hasPID, wid, hasWID)
	if res.Unresolved == nil {
		res.Resource = authz.Resource{Kind: e.Resource, Op: e.Operation}
	}
	return res
}

// generic checks the pid and window_id arguments of a call whose shape names no resource.
func (r *resolver) generic(ctx context.Context, pid int, hasPID bool, wid uint32, hasWID bool) resolution {
	var res resolution
	if hasPID {
		res.SelfPID = r.self(pid, r.procs.read(pid))
	}
	if hasWID && res.SelfPID == 0 && r.desk != nil {
		if w, err := r.desk.Window(ctx, wid); err == nil {
			res.SelfPID = r.self(w.PID, r.procs.read(w.PID))
		}
	}
	return res
}

// isProtected reports whether pid is protected (for handlers: tool.Call.Protected).
func (r *resolver) isProtected(pid int) bool { return r.self(pid, r.procs.read(pid)) != 0 }

// self returns pid when it is protected, 0 otherwise.
func (r *resolver) self(pid int, info procInfo) int {
	if r.protect.protected(pid, info) {
		return pid
	}
	return 0
}

// process builds the resource of a process (or of one of its windows).
func (r *resolver) process(s *session, kind authz.ResourceKind, op authz.Operation, pid int, info procInfo) authz.Resource {
	return authz.Resource{
		Kind: kind, Op: op, PID: pid, StartTime: info.start, Executable: info.exe,
		Owned: r.owned(s, pid, info),
	}
}

// owned reports whether process pid (with facts info) is one the session launched, or a
// descendant of one: a program launched in a sandbox runs two processes below the worker's
// child, and an app's windows may belong to its helpers (LibreOffice's soffice.bin under
// oosplash). A process the session launched is the worker's child; a reused pid is not.
func (r *resolver) owned(s *session, pid int, info procInfo) bool {
	if info.ppid == r.selfPID {
		return s.state.Launched(pid)
	}
	root := r.procs.launchRootOf(pid, info)
	return root != 0 && s.state.Launched(root)
}

// window resolves a window target: window_id when given (it must belong to pid), else
// pid's top-most mapped window.
// With exact (window-relative coordinates follow), a pid alone must name a process with
// one mapped window: with several, which one the coordinates are relative to is a guess,
// and the call is refused with ambiguous_window_target.
// listed, when not nil, is the desktop's window list the caller already read: the window
// is found in it rather than asked for again, so one snapshot describes both the target
// and what lies over it.
func (r *resolver) window(ctx context.Context, s *session, tool string, op authz.Operation, pid int, wid uint32, hasWID, exact bool, listed []x11.Window) resolution {
	info := r.procs.read(pid)
	if !info.alive {
		return unresolved(authz.CodeWindowNotFound, "process %d is not running", pid)
	}
	res := resolution{}
	res.SelfPID = r.self(pid, info)
	res.Resource = r.process(s, authz.ResourceWindow, op, pid, info)
	var w x11.Window
	switch {
	case hasWID:
		var err error
		if listed != nil {
			w, err = findWindow(listed, wid)
		} else {
			w, err = r.desk.Window(ctx, wid)
		}
		if err != nil {
			return unresolved(authz.CodeWindowNotFound, "window 0x%x: %v", wid, err)
		}
		if w.PID != pid {
			if self := r.self(w.PID, r.procs.read(w.PID)); self != 0 {
				res.SelfPID = self
				return res
			}
			return unresolved(authz.CodeWindowNotFound, "window 0x%x belongs to pid %d, not %d", wid, w.PID, pid)
		}
	default:
		wins := listed
		if wins == nil {
			var err error
			if wins, err = r.desk.Windows(ctx); err != nil {
				return unresolved(authz.CodeWindowNotFound, "list windows: %v", err)
			}
		}
		n := 0
		for _, c := range wins {
			if c.PID == pid && c.Mapped {
				if n == 0 {
					w = c
				}
				n++
			}
		}
		found := n > 0
		if exact && n > 1 {
			// The ids are formatted only for the refusal.
			ids := make([]string, 0, n)
			for _, c := range wins {
				if c.PID == pid && c.Mapped {
					ids = append(ids, strconv.FormatUint(uint64(c.ID), 10))
				}
			}
			return unresolved(authz.CodeAmbiguousWindowTarget, "process %d has %d windows (%s); name one with window_id", pid, n, strings.Join(ids, ", "))
		}
		if !found {
			// The process as a whole (an accessibility tree of an app without a mapped
			// window): the grant scope is every window of this one process.
			return res
		}
		if r.pinnable[tool] {
			res.pinPID, res.pinWindow = pid, w.ID
		}
	}
	res.Resource.Window, res.Resource.Title, res.frame, res.win, res.hasWin = w.ID, w.Title, w.Frame, w, true
	unverified(&res.Resource, w)
	return res
}

// findWindow returns the window with id from a window list, as Desktop.Window would.
func findWindow(wins []x11.Window, id uint32) (x11.Window, error) {
	for _, w := range wins {
		if w.ID == id {
			return w, nil
		}
	}
	return x11.Window{}, fmt.Errorf("%w: 0x%x", x11.ErrWindowNotFound, id)
}

// unverified withholds what a window's pid would grant when the pid is the client-set
// _NET_WM_PID rather than the one the X server observed: such a window is nobody's own and
// matches no manifest app.
func unverified(r *authz.Resource, w x11.Window) {
	if w.PIDSource != x11.PIDFromXRes {
		r.Owned, r.Executable = false, ""
	}
}

// pointer resolves pointer input: a window with window-relative points, or the display
// with desktop points (or the pointer's position when no point is given). Every point is
// checked for a protected window under it.
func (r *resolver) pointer(ctx context.Context, s *session, tool string, c *callArgs, pid int, hasPID bool, wid uint32, hasWID bool, scope string) resolution {
	var buf [3]x11.Point
	pts := c.appendPoints(buf[:0])
	var res resolution
	// frame is the target window's client area: window-relative points are in it.
	var frame x11.Rect
	// One read of the window list serves the target and the stacking check below.
	var wins []x11.Window
	// early is the question of what lies at the points, sent with that read.
	var early *earlyTops
	switch {
	case hasPID && scope == "desktop":
		return refused(authz.DesktopScopeWithWindow())
	case hasPID:
		if len(pts) > 0 {
			early = r.askTopLevelsEarly(wid, hasWID, pts)
			defer early.discard()
			var err error
			if wins, err = r.desk.Windows(ctx); err != nil {
				return unresolved(authz.CodeWindowNotFound, "list windows: %v", err)
			}
		}
		if res = r.window(ctx, s, tool, authz.OpInput, pid, wid, hasWID, len(pts) > 0, wins); res.Unresolved != nil || res.SelfPID != 0 {
			return res
		}
		frame = res.frame
	case hasWID:
		return refused(authz.WindowWithoutPID())
	case len(pts) > 0 && scope != "desktop":
		return refused(authz.DesktopScopeRequired())
	default:
		res.Resource = authz.Resource{Kind: authz.ResourceDisplay, Op: authz.OpInput}
		if len(pts) == 0 {
			p, err := r.desk.Pointer(ctx)
			if err != nil {
				return unresolved(authz.CodeUnsupported, "read the pointer: %v", err)
			}
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		return res
	}
	if wins == nil {
		var err error
		if wins, err = r.desk.Windows(ctx); err != nil {
			return unresolved(authz.CodeWindowNotFound, "list windows: %v", err)
		}
	}
	for i, p := range pts {
		pts[i] = windowToRoot(frame, p) // now in root coordinates
		if pid := r.protectedAt(wins, pts[i], res.Resource.PID); pid != 0 {
			res.ProtectedUIPID = pid
			return res
		}
	}
	// The window manager's list has no override-redirect windows (a screen locker, another
	// client's popup, a protected process's own): ask the server what is on top at each
	// point.
	if tf, ok := r.desk.(topLevelFinder); ok {
		at := slices.Clone(pts)
		tls, err := early.answer(ctx, at)
		if tls == nil && err == nil {
			tls, err = tf.TopLevelsAt(ctx, at)
		}
		if err != nil {
			return unresolved(authz.CodeWindowNotFound, "find the window at each point: %v", err)
		}
		res.at.Points, res.at.Tops = at, tls
		for _, tl := range tls {
			// Managed windows, decorations included, were decided above from the window
			// manager's list (a frame belongs to the window manager's process, not to the
			// client it frames); only what bypasses the window manager is left.
			if tl.OverrideRedirect && tl.PID > 0 && tl.PID != res.Resource.PID {
				if self := r.self(tl.PID, r.procs.read(tl.PID)); self != 0 {
					res.ProtectedUIPID = self
					return res
				}
			}
		}
	}
	return res
}

// windowToRoot is tool.WindowToRoot, named apart from the resolver's tool parameters.
var windowToRoot = tool.WindowToRoot

// topLevelAsker is implemented by desktops that can send the questions of what lies at
// points without waiting for the answers, and guess a window's frame without asking
// (*x11.Backend).
type topLevelAsker interface {
	KnownFrame(id uint32) (x11.Rect, bool)
	AskTopLevelsAt(pts []x11.Point) *x11.TopLevelsQuestion
}

// earlyTops is what lies at a call's points, asked before the window list is read, at the
// points the window's last known frame gives: one round trip answers both. It answers
// only when the frame the list then gives puts the points at the same places.
type earlyTops struct {
	pts []x11.Point // root coordinates
	q   *x11.TopLevelsQuestion
}

// askTopLevelsEarly sends the question of what lies at rel (relative to window wid) on the
// desktop's connection, or returns nil when the desktop cannot, or does not know the window.
func (r *resolver) askTopLevelsEarly(wid uint32, hasWID bool, rel []x11.Point) *earlyTops {
	a, ok := r.desk.(topLevelAsker)
	if !ok || !hasWID {
		return nil
	}
	f, ok := a.KnownFrame(wid)
	if !ok {
		return nil
	}
	pts := make([]x11.Point, len(rel))
	for i, p := range rel {
		pts[i] = windowToRoot(f, p)
	}
	return &earlyTops{pts: pts, q: a.AskTopLevelsAt(pts)}
}

// answer returns what lies at pts when they are the points asked about early; nil and no
// error otherwise (the caller asks the server).
func (e *earlyTops) answer(ctx context.Context, pts []x11.Point) ([]x11.TopLevel, error) {
	if e == nil || e.q == nil || !slices.Equal(e.pts, pts) {
		return nil, nil
	}
	q := e.q
	e.q = nil
	return q.Answer(ctx)
}

// discard drops the answers of a question that was not used.
func (e *earlyTops) discard() {
	if e != nil && e.q != nil {
		e.q.Discard()
		e.q = nil
	}
}

// topLevelFinder is implemented by desktops that can say which top-level window receives
// pointer events at a point as the server decides it (*x11.Backend).
type topLevelFinder interface {
	TopLevelsAt(ctx context.Context, pts []x11.Point) ([]x11.TopLevel, error)
}

// protectedAt returns the pid of a protected window that is the top-most window at p
// (its decorations included), or 0. known is a pid already found not to be protected.
func (r *resolver) protectedAt(wins []x11.Window, p x11.Point, known int) int {
	for _, w := range wins { // top-most first
		if !w.Mapped || w.Minimized {
			continue
		}
		f := w.Frame
		inClient := f.Contains(p.X, p.Y)
		inDecor := x11.Rect{X: f.X - decorationSide, Y: f.Y - decorationTop, Width: f.Width + 2*decorationSide, Height: f.Height + decorationTop + decorationSide}.Contains(p.X, p.Y)
		if !inClient && !inDecor {
			continue
		}
		if w.PID != known || known == 0 {
			if self := r.self(w.PID, r.procs.read(w.PID)); self != 0 {
				return self
			}
		}
		if inClient {
			return 0 // an ordinary window is on top here
		}
	}
	return 0
}

// keyboard resolves keyboard input: a named window, or else the focused window (pinned,
// so the keys go exactly where the decision was made), or the display when no window has
// the focus or scope is "desktop".
func (r *resolver) keyboard(ctx context.Context, s *session, tool string, pid int, hasPID bool, wid uint32, hasWID bool, scope string) resolution {
	switch {
	case hasPID && scope == "desktop":
		return refused(authz.DesktopScopeWithWindow())
	case hasPID:
		return r.window(ctx, s, tool, authz.OpInput, pid, wid, hasWID, false, nil)
	case hasWID:
		return refused(authz.WindowWithoutPID())
	}
	display := resolution{Target: authz.Target{Resource: authz.Resource{Kind: authz.ResourceDisplay, Op: authz.OpInput}}}
	wins, err := r.desk.Windows(ctx)
	if err != nil {
		return unresolved(authz.CodeWindowNotFound, "list windows: %v", err)
	}
	for _, w := range wins {
		if !w.Focused || !w.Mapped {
			continue
		}
		// One read of the focused process for both the protection check and the pinned
		// target, so both describe the same process.
		info := r.procs.read(w.PID)
		if self := r.self(w.PID, info); self != 0 {
			display.ProtectedUIPID = self
			return display
		}
		if scope == "desktop" || !r.pinnable[tool] || w.PID <= 0 {
			return display
		}
		if !info.alive {
			return display
		}
		res := resolution{pinPID: w.PID, pinWindow: w.ID, frame: w.Frame, win: w, hasWin: true}
		res.Resource = r.process(s, authz.ResourceWindow, authz.OpInput, w.PID, info)
		res.Resource.Window, res.Resource.Title = w.ID, w.Title
		unverified(&res.Resource, w)
		return res
	}
	return display
}

// focusProtected reports whether the focused window belongs to a protected process (a
// consent dialog, the terminal showing a prompt). Unknown is not protected: the keyboard
// resolution refuses input into a protected focused window on its own.
func (r *resolver) focusProtected(ctx context.Context) bool {
	if r.desk == nil {
		return false
	}
	wins, err := r.desk.Windows(ctx)
	if err != nil {
		return false
	}
	for _, w := range wins {
		if w.Focused {
			return r.self(w.PID, r.procs.read(w.PID)) != 0
		}
	}
	return false
}
