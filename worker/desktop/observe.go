package desktop

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

func (d *desk) observeSpecs() []spec {
	captureProps := map[string]prop{
		"max_dimension": intProp("Longer side of the returned image in pixels (default 1280).", 64, 8192),
		"format":        enumProp("Image format (default png).", "png", "jpeg"),
		"quality":       intProp("JPEG quality (default 80).", 1, 100),
	}
	desktopProps := map[string]prop{"include_windows": boolProp("Also list the windows (default true)."),
		"screenshot_out_file": outFileProp}
	for k, v := range captureProps {
		desktopProps[k] = v
	}
	zoomProps := map[string]prop{
		"pid": pidProp, "window_id": windowProp,
		"x1": numProp("Left edge, window-relative."), "y1": numProp("Top edge, window-relative."),
		"x2": numProp("Right edge (exclusive), window-relative."), "y2": numProp("Bottom edge (exclusive), window-relative."),
		"format": captureProps["format"], "quality": captureProps["quality"],
	}
	return []spec{
		{name: "list_windows", description: "List top-level windows, top-most first, with pid (server-observed when possible), title, class, frame in desktop coordinates and state.",
			schema: schema(nil, map[string]prop{"pid": pidProp}), handler: d.listWindows, args: tool.NewArgs[listWindowsArgs]},
		{name: "list_apps", description: "List applications (processes owning windows) with executable and window ids.",
			schema: schema(nil, nil), handler: d.listApps, args: tool.NewArgs[sessionArgs]},
		{name: "get_screen_size", description: "Return the desktop size in pixels.", schema: schema(nil, nil), handler: d.screenSize, args: tool.NewArgs[sessionArgs]},
		{name: "get_cursor_position", description: "Return the pointer position in desktop coordinates.", schema: schema(nil, nil), handler: d.cursorPosition, args: tool.NewArgs[sessionArgs]},
		{name: "get_desktop_state", description: "Screenshot of the whole desktop, downscaled so its longer side is at most max_dimension (scale reported), plus the window list.",
			schema: schema(nil, desktopProps), handler: d.desktopState, args: tool.NewArgs[desktopStateArgs], touches: writesScreenshot},
		{name: "zoom", description: "Capture a region of a window at full resolution (x1,y1)-(x2,y2), window-relative. Parts covered by windows the session may not see are painted grey (#808080); structuredContent.masked says how much.",
			schema: schema([]string{"pid", "window_id", "x1", "y1", "x2", "y2"}, zoomProps), handler: d.zoom, args: tool.NewArgs[zoomArgs], touches: writesScreenshot},
	}
}

// listWindowsArgs are list_windows's arguments.
type listWindowsArgs struct {
	PID     *int   `json:"pid"`
	Session string `json:"session"`
}

func (d *desk) listWindows(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[listWindowsArgs](call)
	if err != nil {
		return nil, err
	}
	wins, err := d.b.Windows(ctx)
	if err != nil {
		return nil, refusal(err)
	}
	out := make([]x11.Window, 0, len(wins))
	var sb strings.Builder
	for _, w := range wins {
		if a.PID != nil && w.PID != *a.PID {
			continue
		}
		out = append(out, w)
		fmt.Fprintf(&sb, "- window_id=%d pid=%d %q class=%s frame=%dx%d+%d+%d%s\n", w.ID, w.PID, w.Title, w.Class,
			w.Frame.Width, w.Frame.Height, w.Frame.X, w.Frame.Y, flags(w))
	}
	text := fmt.Sprintf("%d windows\n%s", len(out), sb.String())
	return result(text, map[string]any{"windows": out, "count": len(out)}), nil
}

func flags(w x11.Window) string {
	var f []string
	if w.Focused {
		f = append(f, "focused")
	}
	if w.Minimized {
		f = append(f, "minimized")
	}
	if !w.Mapped {
		f = append(f, "unmapped")
	}
	if len(f) == 0 {
		return ""
	}
	return " [" + strings.Join(f, ",") + "]"
}

func (d *desk) listApps(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	if _, err := tool.ArgsOf[sessionArgs](call); err != nil {
		return nil, err
	}
	apps, err := d.b.Apps(ctx)
	if err != nil {
		return nil, refusal(err)
	}
	var sb strings.Builder
	for _, app := range apps {
		fmt.Fprintf(&sb, "- pid=%d %s (%s) windows=%v\n", app.PID, app.Name, app.Executable, app.Windows)
	}
	return result(fmt.Sprintf("%d apps\n%s", len(apps), sb.String()), map[string]any{"apps": apps, "count": len(apps)}), nil
}

func (d *desk) screenSize(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	if _, err := tool.ArgsOf[sessionArgs](call); err != nil {
		return nil, err
	}
	w, h := d.b.ScreenSize()
	return result(fmt.Sprintf("%dx%d", w, h), map[string]any{"width": w, "height": h, "scale_factor": 1}), nil
}

func (d *desk) cursorPosition(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	if _, err := tool.ArgsOf[sessionArgs](call); err != nil {
		return nil, err
	}
	dev, which := d.b.Core(), "core"
	if seat := d.seats.of(call.Session); seat != nil {
		dev, which = seat.Devices(), "session"
	}
	p, err := dev.Pointer(ctx)
	if err != nil {
		return nil, refusal(err)
	}
	return result(fmt.Sprintf("(%d, %d), the %s pointer", p.X, p.Y, which),
		map[string]any{"x": p.X, "y": p.Y, "pointer": which, "available": true, "source": "x11_" + which}), nil
}

type captureArgs struct {
	MaxDimension *int   `json:"max_dimension"`
	Format       string `json:"format"`
	Quality      *int   `json:"quality"`
}

func (c captureArgs) options() (x11.CaptureOptions, error) {
	var o x11.CaptureOptions
	switch c.Format {
	case "", "png":
		o.Format = x11.PNG
	case "jpeg":
		o.Format = x11.JPEG
	default:
		return o, invalid("format %q: want png or jpeg", c.Format)
	}
	if c.MaxDimension != nil {
		if *c.MaxDimension < 64 || *c.MaxDimension > 8192 {
			return o, invalid("max_dimension %d: want 64–8192", *c.MaxDimension)
		}
		o.MaxDimension = *c.MaxDimension
	}
	if c.Quality != nil {
		if *c.Quality < 1 || *c.Quality > 100 {
			return o, invalid("quality %d: want 1–100", *c.Quality)
		}
		o.Quality = *c.Quality
	}
	return o, nil
}

// imageResult returns a capture: the image as content, or, with out, written there
// instead (screenshot_file_path says where).
func imageResult(text string, img *x11.Image, out *outFile, extra map[string]any) (*tool.Result, error) {
	st := map[string]any{
		"width": img.Width, "height": img.Height, "scale": img.Scale,
		"source": img.Source, "mime_type": img.MIMEType, "capture_route": img.Route,
	}
	for k, v := range extra {
		st[k] = v
	}
	if out != nil {
		if err := out.write(img.Data); err != nil {
			return nil, err
		}
		st["screenshot_file_path"] = out.path
		return &tool.Result{Content: []tool.Content{tool.Text(text + "; written to " + out.path)}, Structured: st}, nil
	}
	return &tool.Result{Content: []tool.Content{tool.Text(text), tool.Image(img.Data, img.MIMEType)}, Structured: st}, nil
}

// desktopState captures the whole display: it is whole-display observation, which needs
// the session's consent grant or manifest entry for the display itself. Only windows of
// protected processes (the host's consent dialog and indicator, cua-host itself, the
// terminal showing a prompt) are painted over; everything else shows.
// desktopStateArgs are get_desktop_state's arguments.
type desktopStateArgs struct {
	captureArgs
	IncludeWindows    *bool   `json:"include_windows"`
	ScreenshotOutFile *string `json:"screenshot_out_file"`
	Session           string  `json:"session"`
}

func (d *desk) desktopState(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[desktopStateArgs](call)
	if err != nil {
		return nil, err
	}
	opts, err := a.options()
	if err != nil {
		return nil, err
	}
	out, err := openOutFile(call, a.ScreenshotOutFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if call.Protected != nil {
		opts.Hide = func(pid int, _ uint32) bool { return call.Protected(pid) }
	}
	img, err := d.b.Capture(ctx, opts)
	if err != nil {
		return nil, refusal(err)
	}
	// The contract's fields: the display, the screen and the screenshot's sizes. X11 has no
	// display scale factor; the screenshot's own downscale is "scale".
	extra := map[string]any{
		"platform": "linux", "display": d.b.Display(), "screen_width": img.Source.Width, "screen_height": img.Source.Height,
		"scale_factor": 1, "screenshot_width": img.Width, "screenshot_height": img.Height, "screenshot_mime_type": img.MIMEType,
	}
	text := fmt.Sprintf("desktop %dx%d captured as %dx%d (scale %.4g)", img.Source.Width, img.Source.Height, img.Width, img.Height, img.Scale)
	if m := img.Masked; m != nil && m.Pixels > 0 {
		extra["masked"] = map[string]any{"windows": m.Windows, "rects": len(m.Rects), "pixels": m.Pixels, "color": "#808080"}
		text += fmt.Sprintf("; %d protected window(s) painted grey", m.Windows)
	}
	if a.IncludeWindows == nil || *a.IncludeWindows {
		wins, err := d.b.Windows(ctx)
		if err == nil {
			extra["windows"] = wins
			text += fmt.Sprintf("; %d windows", len(wins))
		}
	}
	return imageResult(text, img, out, extra)
}

// zoomArgs are zoom's arguments.
type zoomArgs struct {
	PID      int      `json:"pid"`
	WindowID uint32   `json:"window_id"`
	RX1      *float64 `json:"x1"`
	RY1      *float64 `json:"y1"`
	RX2      *float64 `json:"x2"`
	RY2      *float64 `json:"y2"`
	Format   string   `json:"format"`
	Quality  *int     `json:"quality"`
	Session  string   `json:"session"`
}

func (d *desk) zoom(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[zoomArgs](call)
	if err != nil {
		return nil, err
	}
	opts, err := captureArgs{Format: a.Format, Quality: a.Quality}.options()
	if err != nil {
		return nil, err
	}
	r, err := zoomRect(a.RX1, a.RY1, a.RX2, a.RY2)
	if err != nil {
		return nil, err
	}
	pid, wid := a.PID, a.WindowID
	if pid == 0 || wid == 0 {
		return nil, invalid("pid and window_id are required")
	}
	win, err := resolve(ctx, d.b, call.Window, targetArgs{PID: &pid, WindowID: &wid})
	if err != nil {
		return nil, err
	}
	if r.X+r.Width > win.Frame.Width || r.Y+r.Height > win.Frame.Height {
		return nil, invalid("region (%d,%d)-(%d,%d) is outside window %d (%dx%d)", r.X, r.Y, r.X+r.Width, r.Y+r.Height, wid, win.Frame.Width, win.Frame.Height)
	}
	opts.Window, opts.Region, opts.MaxDimension = wid, &r, -1
	opts.MayShow = d.mayShow(call, win)
	img, err := d.b.Capture(ctx, opts)
	if err != nil {
		return nil, refusal(err)
	}
	text := fmt.Sprintf("window %d region %dx%d+%d+%d at full resolution", wid, r.Width, r.Height, r.X, r.Y) + maskedText(img)
	return imageResult(text, img, nil, map[string]any{"window_id": wid, "pid": pid, "region": r, "masked": maskedInfo(img)})
}

// mayShow decides which windows stacked above win a capture of win may show: those of
// win's own process (when the X server observed it) and of the processes this session
// launched that are still the backend's children (a pid reused by another process is not).
// Everything else is masked: the user's windows, protected processes such as a consent
// dialog, window-manager frames around them, and windows whose owner is unknown.
func (d *desk) mayShow(call *tool.Call, win *x11.Window) func(pid int, window uint32) bool {
	own := 0
	if win.PIDSource == x11.PIDFromXRes {
		own = win.PID
	}
	return func(pid int, _ uint32) bool {
		if pid <= 0 {
			return false
		}
		if pid == own {
			return true
		}
		return d.launchedBy(call, pid)
	}
}

// maxMaskedAreas bounds the masked rectangles listed in a result.
const maxMaskedAreas = 16

// maskedInfo reports what a window capture masked, for the result's structured content:
// how many windows, rectangles and full-resolution pixels, the colour, and the first
// rectangles in the returned image's coordinates.
func maskedInfo(img *x11.Image) map[string]any {
	m := img.Masked
	if m == nil {
		return nil
	}
	areas := make([]x11.Rect, 0, min(len(m.Rects), maxMaskedAreas))
	for _, r := range m.Rects[:min(len(m.Rects), maxMaskedAreas)] {
		areas = append(areas, scaleRect(r, img.Scale))
	}
	return map[string]any{
		"windows": m.Windows, "rects": len(m.Rects), "pixels": m.Pixels, "outside_window_pixels": m.Outside,
		"color": fmt.Sprintf("#%06x", x11.MaskRGB), "areas": areas, "areas_truncated": len(m.Rects) > maxMaskedAreas,
	}
}

// maskedText is the sentence a result's text adds when a capture masked something.
func maskedText(img *x11.Image) string {
	m := img.Masked
	if m == nil || m.Pixels == 0 {
		return ""
	}
	return fmt.Sprintf("; %d pixels painted #%06x because windows the session may not see cover them (%d windows) or the window does not draw them", m.Pixels, x11.MaskRGB, m.Windows)
}

// scaleRect converts a rectangle at full resolution to image coordinates.
func scaleRect(r x11.Rect, scale float64) x11.Rect {
	if scale == 1 {
		return r
	}
	x0, y0 := int(float64(r.X)*scale), int(float64(r.Y)*scale)
	x1, y1 := int(math.Ceil(float64(r.X+r.Width)*scale)), int(math.Ceil(float64(r.Y+r.Height)*scale))
	return x11.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

// zoomRect validates a zoom region given by its corners.
func zoomRect(x1, y1, x2, y2 *float64) (x11.Rect, error) {
	if x1 == nil || y1 == nil || x2 == nil || y2 == nil {
		return x11.Rect{}, invalid("x1, y1, x2 and y2 are required")
	}
	var v [4]int
	for i, p := range []struct {
		n string
		f *float64
	}{{"x1", x1}, {"y1", y1}, {"x2", x2}, {"y2", y2}} {
		c, err := coord(p.n, *p.f)
		if err != nil {
			return x11.Rect{}, err
		}
		v[i] = c
	}
	if v[0] < 0 || v[1] < 0 || v[2] <= v[0] || v[3] <= v[1] {
		return x11.Rect{}, invalid("region (%d,%d)-(%d,%d): want 0 ≤ x1 < x2 and 0 ≤ y1 < y2", v[0], v[1], v[2], v[3])
	}
	return x11.Rect{X: v[0], Y: v[1], Width: v[2] - v[0], Height: v[3] - v[1]}, nil
}

// writesScreenshot is what the capture tools touch beyond their target: the file that
// screenshot_out_file names, written.
var writesScreenshot = tool.Touches{Files: []tool.FileArg{{Arg: "screenshot_out_file", Op: authz.OpWrite}}}
