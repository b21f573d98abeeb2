package desktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

func (d *desk) appSpecs() []spec {
	launch := map[string]prop{
		"name":                 boundedStr("A desktop id (\"debian-xterm\"), an application's Name (\"XTerm\") or a program name (\"xterm\"). Desktop applications launch freely with file or URL arguments their entry takes; anything else needs the user's consent in standard mode.", 256),
		"launch_path":          boundedStr("Absolute path of a program (instead of name); needs consent in standard mode.", 4096),
		"bundle_id":            boundedStr("macOS bundle id; not supported on Linux (use name).", 256),
		"urls":                 strArray("URLs (http, https, mailto, file) or absolute paths of files, for applications whose entry takes %u/%U (URLs or files) or %f/%F (files).", 32),
		"additional_arguments": strArray("Arguments: files or URLs as for urls; other arguments need consent in standard mode.", 64),
		"timeout_ms":           intProp("How long to wait for the first window (default 10000).", 0, 60000),
	}
	win := map[string]prop{"pid": pidProp, "window_id": windowProp}
	frame := map[string]prop{"pid": pidProp, "window_id": windowProp,
		"x": numProp("Left of the client area, desktop coordinates."), "y": numProp("Top of the client area."),
		"width": prop{"type": "number", "description": "Width in pixels.", "minimum": 1, "maximum": 32767}, "height": prop{"type": "number", "description": "Height in pixels.", "minimum": 1, "maximum": 32767}}
	return []spec{
		{name: "launch_app", description: "Start an application on this display and wait for its first window; returns pid and window ids.",
			schema: schema(nil, launch), handler: d.launchApp, args: tool.NewArgs[launchArgs], touches: tool.Touches{Launch: tool.LaunchFrom(planLaunch)}},
		{name: "kill_app", description: "Stop a process: SIGTERM, then SIGKILL after a grace period.",
			schema: schema([]string{"pid"}, map[string]prop{"pid": pidProp, "grace_ms": intProp("Grace before SIGKILL (default 2000).", 0, 30000)}), handler: d.killApp, args: tool.NewArgs[killArgs]},
		{name: "bring_to_front", description: "Raise a window and give it the keyboard focus.",
			schema: schema([]string{"pid", "window_id"}, win), handler: d.bringToFront, args: tool.NewArgs[winArgs]},
		{name: "set_window_frame", description: "Move and resize a window; returns the frame the window manager granted.",
			schema: schema([]string{"pid", "window_id"}, frame), handler: d.setFrame, args: tool.NewArgs[frameArgs]},
		{name: "clipboard_read", description: "Report what the clipboard offers; with include_text, its text too.",
			schema: schema(nil, map[string]prop{"include_text": boolProp("Return the clipboard's text (default false: only the types on offer).")}), handler: d.clipboardRead, args: tool.NewArgs[clipboardReadArgs]},
		{name: "clipboard_write", description: "Write text, an image (image_path) or a file reference (file_path) to the clipboard; this worker serves it until another client takes it.",
			schema: schema(nil, map[string]prop{"text": boundedStr("Text.", x11.MaxClipboardBytes),
				"image_path": strProp("Absolute path of a PNG or JPEG file whose image to place on the clipboard (at most 256000 bytes)."),
				"file_path":  strProp("Absolute path of a file to place on the clipboard as a file reference (text/uri-list).")}), handler: d.clipboardWrite, args: tool.NewArgs[clipboardWriteArgs],
			touches: tool.Touches{Files: []tool.FileArg{{Arg: "image_path", Op: authz.OpRead}, {Arg: "file_path", Op: authz.OpRead}}}},
	}
}

// launchArgs are launch_app's arguments.
type launchArgs struct {
	Name      string   `json:"name"`
	Path      string   `json:"launch_path"`
	BundleID  *string  `json:"bundle_id"`
	URLs      []string `json:"urls"`
	Args      []string `json:"additional_arguments"`
	TimeoutMS *int     `json:"timeout_ms"`
	Session   string   `json:"session"`
}

func (d *desk) launchApp(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[launchArgs](call)
	if err != nil {
		return nil, err
	}
	timeout := 10 * time.Second
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 0 || *a.TimeoutMS > 60000 {
			return nil, invalid("timeout_ms %d: want 0–60000", *a.TimeoutMS)
		}
		timeout = time.Duration(*a.TimeoutMS) * time.Millisecond
		if timeout == 0 {
			timeout = -1
		}
	}
	launch := call.Launch
	if launch == nil {
		// Called without the worker's authorizer: plan the launch the same way.
		plan, err := planLaunch(a)
		if err != nil {
			return nil, err
		}
		launch = &tool.Launch{Argv: plan.Argv, DesktopID: plan.DesktopID, Declared: plan.Declared}
	}
	if d.b.LaunchesUntrusted() {
		if err := untrustedRefusal(launch.Argv); err != nil {
			return nil, err
		}
	}
	var before *x11.Focus
	if call.Session != nil && !call.Session.OwnsDisplay {
		if f, err := d.b.InputFocus(ctx); err == nil && f.TopLevel != 0 {
			before = &f
		}
	}
	started := time.Now()
	l, err := d.b.Launch(ctx, x11.LaunchOptions{Name: launch.Argv[0], Args: launch.Argv[1:], Env: accessibleEnv, WindowTimeout: timeout})
	mapped := time.Since(started)
	root := 0
	if l != nil {
		root = l.PID
		if l.SandboxPID != 0 {
			root = l.SandboxPID
		}
		if call.Session != nil {
			call.Session.RecordLaunchOf(root, l.PID)
		}
	}
	moved, kept := false, false
	if l != nil && before != nil && len(l.Windows) > 0 {
		moved, kept = d.keepFocus(ctx, *before, root)
		// Some window managers hand the focus to a new window later (kwin_x11).
		d.watchFocus(*before, &l.Windows[0], false, nil)
	}
	if err != nil {
		if l == nil {
			return nil, refusal(err) // nothing started
		}
		return nil, err
	}
	ids := make([]uint32, 0, len(l.Windows))
	for _, w := range l.Windows {
		ids = append(ids, w.ID)
	}
	drawn, drawnAfter := false, time.Duration(0)
	if len(ids) > 0 && timeout > mapped {
		var err error
		drawn, drawnAfter, err = d.b.AwaitDrawn(ctx, ids[0], min(drawnWait, timeout-mapped))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			d.log.Debug("launch: wait for the first frame", "window", ids[0], "err", err)
		}
	}
	command := QuoteCommand(launch.Argv)
	text := fmt.Sprintf("launched %s pid=%d windows=%v", command, l.PID, ids)
	if l.WindowTimedOut {
		text += " (no window yet: timed out waiting)"
	}
	if len(ids) > 0 && !drawn {
		text += fmt.Sprintf(" (the window was still blank after %v: it may not take input yet)", drawnAfter.Round(time.Millisecond))
	}
	if l.Exited {
		text += " (the process exited before showing a window"
		if l.ExitCode != nil {
			text += fmt.Sprintf(", status %d", *l.ExitCode)
		}
		text += ")"
	}
	var warnings []string
	if l.Untrusted {
		warnings = untrustedWarnings(l.Executable)
		for _, w := range warnings {
			text += "\nwarning: " + w
		}
	}
	out := map[string]any{
		"effect": "launched", "route": "exec", "verified": len(ids) > 0, "pid": l.PID, "executable": l.Executable,
		"argv": launch.Argv, "command": command, "desktop_id": launch.DesktopID, "declared": launch.Declared,
		"untrusted_x_client": l.Untrusted, "sandboxed": l.Sandboxed,
		"window_ids": ids, "windows": l.Windows, "window_timed_out": l.WindowTimedOut, "exited": l.Exited,
	}
	if len(ids) > 0 {
		out["window_drawn"], out["drawn_after_ms"] = drawn, drawnAfter.Milliseconds()
	}
	if moved {
		out["focus_restored"] = kept
		if kept {
			text += "\nthe window manager focused the new window; the person's window got the keyboard focus back (read back)"
		} else {
			text += "\nthe window manager focused the new window, and the person's focus could not be given back"
		}
	}
	if l.ExitCode != nil {
		out["exit_code"] = *l.ExitCode
	}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	return result(text, out), nil
}

// drawnWait bounds how long launch_app waits, once the first window is mapped, for the
// program to draw into it (x11.AwaitDrawn), within what is left of its timeout_ms: a
// window not yet drawn is not yet shown. Toolkits map a window before they draw it and go
// on setting it up until they do: a GTK4 editor given a file moved the cursor back to the
// start of the text once the file had loaded, so keys typed before came out after those
// typed later; its first frame came after the load. An xterm draws within milliseconds.
// (The first keys into a launched program also wait until its window is still: see
// x11's settleFocusLocked.)
const drawnWait = 10 * time.Second

// accessibleEnv turns on the accessibility of toolkits that keep it off unless a screen
// reader runs: Qt joins the accessibility bus only when told to. What the session launches
// has an accessibility tree for the element tools, menus and read-backs.
var accessibleEnv = []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "QT_ACCESSIBILITY=1"}

// focusWatch is how long after a launch on a shared display the person's keyboard focus is
// watched: a window manager focuses a new window when it maps it, which the person did not
// ask for.
const focusWatch = 300 * time.Millisecond

// keepFocus gives the person's focus back to the window that had it before a launch, when
// within focusWatch it moved to a window of the launched process pid. moved says whether
// it moved; kept is read back at the end: the focus is where it was before.
func (d *desk) keepFocus(ctx context.Context, before x11.Focus, pid int) (moved, kept bool) {
	for deadline := time.Now().Add(focusWatch); time.Now().Before(deadline); {
		f, err := d.b.InputFocus(ctx)
		if err != nil {
			return moved, false
		}
		if f.TopLevel != before.TopLevel && (f.PID == pid || x11.DescendantOf(f.PID, pid)) {
			moved = true
			// Only the focus goes back: the new window stays on top, where the person sees it.
			if err := d.b.GiveFocusBack(ctx, before, false); err != nil {
				d.log.Debug("launch: give the focus back", "window", before.TopLevel, "err", err)
			}
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return moved, false
		case <-t.C:
		}
	}
	f, err := d.b.InputFocus(ctx)
	if err != nil || f.Window == before.Window || !moved {
		return moved, err == nil && f.Window == before.Window
	}
	// The window manager keeps handing the focus on (kwin_x11): ask it through EWMH, which
	// raises the person's window over the new one.
	if err := d.b.GiveFocusBack(ctx, before, true); err != nil {
		d.log.Debug("launch: give the focus back through the window manager", "window", before.TopLevel, "err", err)
	}
	for deadline := time.Now().Add(focusWatch); ; {
		f, err = d.b.InputFocus(ctx)
		if err != nil || f.Window == before.Window || time.Now().After(deadline) {
			return moved, err == nil && f.Window == before.Window
		}
		select {
		case <-ctx.Done():
			return moved, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// killArgs are kill_app's arguments.
type killArgs struct {
	PID     int    `json:"pid"`
	GraceMS *int   `json:"grace_ms"`
	Session string `json:"session"`
}

func (d *desk) killApp(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[killArgs](call)
	if err != nil {
		return nil, err
	}
	grace := 2 * time.Second
	if a.GraceMS != nil {
		if *a.GraceMS < 0 || *a.GraceMS > 30000 {
			return nil, invalid("grace_ms %d: want 0–30000", *a.GraceMS)
		}
		grace = time.Duration(*a.GraceMS) * time.Millisecond
	}
	if a.PID <= 1 {
		return nil, invalid("pid %d: want a process id above 1", a.PID)
	}
	if !x11.ProcessAlive(a.PID) {
		return nil, invalid("no process with pid %d", a.PID)
	}
	forced, err := d.b.Kill(ctx, a.PID, grace)
	if err != nil {
		return nil, err
	}
	gone := !x11.ProcessAlive(a.PID)
	signal := "SIGTERM"
	if forced {
		signal = "SIGKILL"
	}
	return result(fmt.Sprintf("stopped pid %d with %s", a.PID, signal), map[string]any{
		"effect": "terminated", "route": "signal", "signal": signal, "verified": gone, "pid": a.PID,
		"evidence": map[string]any{"process_gone": gone},
	}), nil
}

type winArgs struct {
	PID      int    `json:"pid"`
	WindowID uint32 `json:"window_id"`
	Session  string `json:"session"`
}

func (w winArgs) target() targetArgs { return targetArgs{PID: &w.PID, WindowID: &w.WindowID} }

func (d *desk) bringToFront(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[winArgs](call)
	if err != nil {
		return nil, err
	}
	// A minimized window is what bring_to_front is for: activation restores it.
	win, err := resolveMinimized(ctx, d.b, call.Window, a.target())
	if err != nil {
		return nil, err
	}
	route, focused, err := d.b.Activate(ctx, win.ID)
	if err != nil {
		return nil, err
	}
	after, _ := d.b.Window(ctx, win.ID)
	if win.Minimized {
		after = restored(ctx, d.b, win.ID)
	}
	verified := focused && !after.Minimized
	return result(fmt.Sprintf("window %d to front via %s (focused %v)", win.ID, route, focused), map[string]any{
		"effect": "activated", "route": route, "verified": verified, "window_id": win.ID, "pid": win.PID,
		"evidence": map[string]any{"focused": after.Focused, "stack": after.Stack, "was_minimized": win.Minimized, "minimized": after.Minimized},
	}), nil
}

// frameArgs are set_window_frame's arguments.
type frameArgs struct {
	winArgs
	X      *float64 `json:"x"`
	Y      *float64 `json:"y"`
	Width  *float64 `json:"width"`
	Height *float64 `json:"height"`
}

func (d *desk) setFrame(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[frameArgs](call)
	if err != nil {
		return nil, err
	}
	// Moving or resizing a minimized window takes effect when it is restored.
	win, err := resolveMinimized(ctx, d.b, call.Window, a.target())
	if err != nil {
		return nil, err
	}
	r := win.Frame
	if a.X != nil {
		if r.X, err = coord("x", *a.X); err != nil {
			return nil, err
		}
	}
	if a.Y != nil {
		if r.Y, err = coord("y", *a.Y); err != nil {
			return nil, err
		}
	}
	if a.Width != nil {
		if r.Width, err = coord("width", *a.Width); err != nil {
			return nil, err
		}
	}
	if a.Height != nil {
		if r.Height, err = coord("height", *a.Height); err != nil {
			return nil, err
		}
	}
	if r.Width < 1 || r.Height < 1 || r.Width > 32767 || r.Height > 32767 || r.X < -32768 || r.Y < -32768 || r.X > 32767 || r.Y > 32767 {
		return nil, invalid("frame %dx%d+%d+%d is out of range", r.Width, r.Height, r.X, r.Y)
	}
	granted, route, err := d.b.SetFrame(ctx, win.ID, r)
	if err != nil {
		return nil, err
	}
	// The frame read back is the evidence: what the window manager granted, which it may
	// have adjusted (a minimum size, the screen edge): then only part of the request took.
	act := tool.Action{Effect: tool.EffectConfirmed, Route: tool.RouteSystemAPI, Delivery: tool.Delivered(tool.DeliveryBackground, 1),
		Evidence: []tool.Evidence{{Kind: tool.EvidenceWindowChange}}}
	if granted != r {
		act.Effect = tool.EffectPartial
	}
	return tool.ActionResult(fmt.Sprintf("window %d frame %dx%d+%d+%d (asked %dx%d+%d+%d) via %s", win.ID,
		granted.Width, granted.Height, granted.X, granted.Y, r.Width, r.Height, r.X, r.Y, route), act, map[string]any{
		"effect": "moved", "route": route, "verified": granted == r, "requested": r, "frame": granted, "window_id": win.ID,
	}), nil
}

// sessionArgs are the arguments of tools that take none but the session.
type sessionArgs struct {
	Session string `json:"session"`
}

// clipboardReadArgs are clipboard_read's arguments.
type clipboardReadArgs struct {
	// IncludeText returns the text itself; without it only the types on offer are
	// reported (the contract's default).
	IncludeText bool   `json:"include_text"`
	Session     string `json:"session"`
}

func (d *desk) clipboardRead(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[clipboardReadArgs](call)
	if err != nil {
		return nil, err
	}
	targets, owner, err := d.b.ClipboardTargets(ctx)
	if err != nil {
		return nil, clipboardError(err)
	}
	types := clipboardTypes(targets)
	st := clipboardShape(types)
	st["text"] = nil
	details := map[string]any{"has_owner": owner, "route": "x11_selection", "targets": targets}
	msg := fmt.Sprintf("the clipboard offers %s", strings.Join(types, ", "))
	switch {
	case !owner:
		msg = "the clipboard is empty"
	case !slices.Contains(types, "text/plain"):
	case a.IncludeText:
		text, _, err := d.b.ClipboardRead(ctx)
		if err != nil {
			return nil, clipboardError(err)
		}
		st["text"], msg, details["bytes"] = text, text, len(text)
	default:
		msg += "; pass include_text to read the text"
	}
	return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Structured: st, Details: details}, nil
}

// clipboardTypes names the clipboard's targets as the contract's types: the text targets
// (UTF8_STRING, STRING, TEXT, text/plain…) as "text/plain", MIME types as they are, other
// X targets left out. Sorted, without repeats.
func clipboardTypes(targets []string) []string {
	types := []string{}
	for _, t := range targets {
		switch {
		case t == "UTF8_STRING" || t == "STRING" || t == "TEXT" || t == "COMPOUND_TEXT" || strings.HasPrefix(t, "text/plain"):
			t = "text/plain"
		case !strings.Contains(t, "/"):
			continue
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	return types
}

// clipboardShape is the part of the contract's clipboard results common to reads and
// writes. Clipboard content is private to the person: cua-host's journal never records it
// (the host keeps argument digests, not values), which is what the two flags say.
func clipboardShape(types []string) map[string]any {
	return map[string]any{"supported": true, "types": types, "privacy_sensitive": true, "content_redacted_from_telemetry": true}
}

// clipboardWriteArgs are clipboard_write's arguments.
type clipboardWriteArgs struct {
	Text *string `json:"text"`
	// ImagePath puts a PNG or JPEG file's image on the clipboard; FilePath a reference to
	// a file (as a file manager's copy does). Exactly one of Text, ImagePath, FilePath.
	ImagePath *string `json:"image_path"`
	FilePath  *string `json:"file_path"`
	Session   string  `json:"session"`
}

func (d *desk) clipboardWrite(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[clipboardWriteArgs](call)
	if err != nil {
		return nil, err
	}
	given := 0
	for _, p := range []*string{a.Text, a.ImagePath, a.FilePath} {
		if p != nil {
			given++
		}
	}
	switch {
	case given == 0:
		return nil, invalid("one of text, image_path or file_path is required")
	case given > 1:
		return nil, invalid("give only one of text, image_path and file_path")
	case a.ImagePath != nil:
		return d.clipboardWriteImage(ctx, call, *a.ImagePath)
	case a.FilePath != nil:
		return d.clipboardWriteFile(ctx, call, *a.FilePath)
	}
	if len(*a.Text) > x11.MaxClipboardBytes {
		return nil, invalid("text is %d bytes (at most %d)", len(*a.Text), x11.MaxClipboardBytes)
	}
	if err := d.b.ClipboardWrite(ctx, *a.Text); err != nil {
		return nil, clipboardError(err)
	}
	back, _, rerr := d.b.ClipboardRead(ctx)
	if held, err := d.b.ClipboardKept(ctx, clipboardSettle); err == nil && !held {
		return d.clipboardLost(ctx, len(*a.Text)), nil
	}
	ok := rerr == nil && back == *a.Text
	st := clipboardShape([]string{"text/plain"})
	st["written_type"] = "text/plain"
	return &tool.Result{Content: []tool.Content{tool.Text(fmt.Sprintf("clipboard holds %d bytes", len(*a.Text)))}, Structured: st,
		Details: map[string]any{"effect": "written", "route": "x11_selection", "verified": ok, "bytes": len(*a.Text)}}, nil
}

// clipboardWriteImage puts an image file on the clipboard, served as its own type.
func (d *desk) clipboardWriteImage(ctx context.Context, call *tool.Call, path string) (*tool.Result, error) {
	data, err := readClipboardFile(call, "image_path", path, x11.MaxClipboardBytes)
	if err != nil {
		return nil, err
	}
	var mime string
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		mime = "image/png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		mime = "image/jpeg"
	default:
		return nil, authz.Refuse(authz.CodeUnsupported, "image_path %s is neither a PNG nor a JPEG image", path)
	}
	if err := d.b.ClipboardWriteImage(ctx, data, mime); err != nil {
		return nil, clipboardError(err)
	}
	if held, err := d.b.ClipboardKept(ctx, clipboardSettle); err == nil && !held {
		return d.clipboardLost(ctx, len(data)), nil
	}
	st := clipboardShape([]string{mime})
	st["written_type"] = mime
	return &tool.Result{Content: []tool.Content{tool.Text(fmt.Sprintf("clipboard holds a %d-byte %s image", len(data), mime))}, Structured: st,
		Details: map[string]any{"route": "x11_selection", "bytes": len(data), "path": path}}, nil
}

// clipboardWriteFile puts a reference to a file on the clipboard (text/uri-list). The
// file is checked in the directory the call was authorized for; the reference is its
// path, which whoever pastes it opens later, by path.
func (d *desk) clipboardWriteFile(ctx context.Context, call *tool.Call, path string) (*tool.Result, error) {
	if _, err := readClipboardFile(call, "file_path", path, 0); err != nil {
		return nil, err
	}
	if err := d.b.ClipboardWriteFile(ctx, path); err != nil {
		return nil, clipboardError(err)
	}
	if held, err := d.b.ClipboardKept(ctx, clipboardSettle); err == nil && !held {
		return d.clipboardLost(ctx, len(path)), nil
	}
	st := clipboardShape([]string{"text/uri-list", "x-special/gnome-copied-files", "text/plain"})
	st["written_type"] = "text/uri-list"
	return &tool.Result{Content: []tool.Content{tool.Text("clipboard holds a reference to " + path)}, Structured: st,
		Details: map[string]any{"route": "x11_selection", "path": path}}, nil
}

// readClipboardFile checks that path is an absolute, clean path of a regular file and
// reads at most limit bytes of it (none for limit 0: only the checks). The authorizer
// decided on the same path (a file read); the file is opened in the directory that
// decision saw, held open (openFileDir), without following a symbolic link at its name.
func readClipboardFile(call *tool.Call, arg, path string, limit int) ([]byte, error) {
	switch {
	case !filepath.IsAbs(path):
		return nil, invalid("%s %q is not an absolute path", arg, path)
	case filepath.Clean(path) != path:
		return nil, invalid("%s %q is not clean (write it as %q)", arg, path, filepath.Clean(path))
	}
	dir, err := openFileDir(call, arg, path, "read")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := dir.Open(filepath.Base(path))
	switch {
	case errors.Is(err, safefile.ErrNotRegular):
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%s %s is not a regular file", arg, path)
	case err != nil:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%s %s: %v", arg, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%s %s: %v", arg, path, err)
	}
	if limit == 0 {
		return nil, nil
	}
	if st.Size() > int64(limit) {
		return nil, authz.Refuse(authz.CodeUnsupported, "%s %s is %d bytes; the clipboard serves at most %d", arg, path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", arg, path, err)
	}
	return data, nil
}
