package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// MaxQueryBytes bounds get_window_state's query.
const MaxQueryBytes = 256

// a11yCapability reports the accessibility backend without connecting to it.
func a11yCapability(c *atspi.Client) tool.Capability {
	if c == nil {
		return tool.Capability{Name: "atspi", Available: false, Detail: "no display"}
	}
	ok, detail := c.Configured()
	return tool.Capability{Name: "atspi", Available: ok, Detail: detail}
}

func (d *desk) a11ySpecs() []spec {
	walk := map[string]prop{
		"pid": pidProp, "window_id": windowProp,
		"max_elements": intProp(fmt.Sprintf("Most elements returned (default %d). The shallowest on-screen elements are kept.", atspi.DefaultMaxElements), 1, atspi.MaxElements),
		"max_depth":    intProp(fmt.Sprintf("Deepest level walked below the window (default %d).", atspi.DefaultMaxDepth), 1, atspi.MaxDepth),
		"query":        boundedStr("Keep only elements whose role, name or value contains this text (case-insensitive).", MaxQueryBytes),
		"timeout_ms":   intProp(fmt.Sprintf("Time bound of the walk (default %d); a walk that hits it returns what it has, truncated.", atspi.DefaultWalkTimeout.Milliseconds()), 50, int64(atspi.MaxWalkTimeout/time.Millisecond)),
	}
	state := map[string]prop{"include_screenshot": boolProp("Also capture the window (default true)."),
		"screenshot_out_file": outFileProp,
		"capture_mode":        enumProp("Deprecated and ignored: the result always has the tree and (unless include_screenshot is false) the screenshot.", "ax", "vision")}
	for k, v := range walk {
		state[k] = v
	}
	setValue := elementProps(map[string]prop{"pid": pidProp, "window_id": windowProp,
		"value": prop{"type": []string{"string", "number"}, "description": "New value: text for an entry (replaces its text), a number for a slider or spin button."}})
	return []spec{
		{name: "get_window_state", description: "One window's accessibility tree as compact rows `- [i] role \"name\" value=… [states] actions=[…]`, with element tokens for click/type_text/set_value/scroll, plus a screenshot (parts covered by windows the session may not see are painted grey, #808080; screenshot_masked says how much). " +
			"Bounded by max_elements, max_depth and timeout_ms (truncated says which). Windows without accessibility return their geometry, degraded.",
			schema: schema([]string{"pid", "window_id"}, state), handler: d.windowState(true), args: tool.NewArgs[walkArgs], touches: writesScreenshot},
		{name: "get_accessibility_tree", description: "The accessibility tree of pid's window (window_id, else its top-most window), like get_window_state without the screenshot.",
			schema: schema([]string{"pid"}, walk), handler: d.windowState(false), args: tool.NewArgs[walkArgs]},
		{name: "set_value", description: "Set an element's value through AT-SPI without moving the pointer or the focus: a slider's or spin button's number (Value), or an entry's text (EditableText, replaced). The value is read back.",
			schema: schema([]string{"pid", "window_id", "value"}, setValue), handler: d.setValue, args: tool.NewArgs[setValueArgs]},
	}
}

// elementProps adds the element-target properties to props.
func elementProps(props map[string]prop) map[string]prop {
	props["element_token"] = prop{"type": "string", "description": "Element token from get_window_state (\"s1a2b3c4d:3\"); needs the same pid and window_id.",
		"pattern": `^s[0-9a-f]{8}:(0|[1-9][0-9]{0,6})$`}
	props["snapshot_id"] = prop{"type": "string", "description": "Snapshot id from get_window_state, with element_index.", "pattern": "^s[0-9a-f]{8}$"}
	props["element_index"] = intProp("Element index in snapshot_id.", 0, atspi.MaxElementIndex)
	return props
}

type walkArgs struct {
	PID               *int    `json:"pid"`
	WindowID          *uint32 `json:"window_id"`
	IncludeScreenshot *bool   `json:"include_screenshot"`
	MaxElements       *int    `json:"max_elements"`
	MaxDepth          *int    `json:"max_depth"`
	Query             string  `json:"query"`
	TimeoutMS         *int    `json:"timeout_ms"`
	ScreenshotOutFile *string `json:"screenshot_out_file"`
	// CaptureMode is accepted and ignored, as the reference driver does ("ax" or
	// "vision"): the result always has both the tree and the screenshot.
	CaptureMode string `json:"capture_mode"`
	Session     string `json:"session"`
}

// options validates the bounds.
func (a walkArgs) options() (atspi.WalkOptions, error) {
	var o atspi.WalkOptions
	if a.MaxElements != nil {
		if *a.MaxElements < 1 || *a.MaxElements > atspi.MaxElements {
			return o, invalid("max_elements %d: want 1–%d", *a.MaxElements, atspi.MaxElements)
		}
		o.MaxElements = *a.MaxElements
	}
	if a.MaxDepth != nil {
		if *a.MaxDepth < 1 || *a.MaxDepth > atspi.MaxDepth {
			return o, invalid("max_depth %d: want 1–%d", *a.MaxDepth, atspi.MaxDepth)
		}
		o.MaxDepth = *a.MaxDepth
	}
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 50 || time.Duration(*a.TimeoutMS)*time.Millisecond > atspi.MaxWalkTimeout {
			return o, invalid("timeout_ms %d: want 50–%d", *a.TimeoutMS, atspi.MaxWalkTimeout.Milliseconds())
		}
		o.Timeout = time.Duration(*a.TimeoutMS) * time.Millisecond
	}
	if len(a.Query) > MaxQueryBytes {
		return o, invalid("query is %d bytes (at most %d)", len(a.Query), MaxQueryBytes)
	}
	o.Query = a.Query
	return o, nil
}

// atspiWindow describes an X window to the accessibility backend.
func atspiWindow(w *x11.Window) atspi.Window {
	return atspi.Window{ID: w.ID, PID: w.PID, Title: w.Title,
		Frame: atspi.Rect{X: w.Frame.X, Y: w.Frame.Y, Width: w.Frame.Width, Height: w.Frame.Height}}
}

// walkBudget leaves room for the rest of the call inside the call's own deadline.
func walkBudget(ctx context.Context, o atspi.WalkOptions) atspi.WalkOptions {
	if o.Timeout == 0 {
		o.Timeout = atspi.DefaultWalkTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 250*time.Millisecond; left < o.Timeout {
			o.Timeout = max(left, 10*time.Millisecond)
		}
	}
	return o
}

func (d *desk) windowState(screenshot bool) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		a, err := tool.ArgsOf[walkArgs](call)
		if err != nil {
			return nil, err
		}
		if !screenshot && (a.IncludeScreenshot != nil || a.ScreenshotOutFile != nil || a.CaptureMode != "") {
			return nil, invalid("include_screenshot, screenshot_out_file and capture_mode are not arguments of get_accessibility_tree")
		}
		if a.CaptureMode != "" && a.CaptureMode != "ax" && a.CaptureMode != "vision" {
			return nil, invalid("capture_mode %q: want \"ax\" or \"vision\" (deprecated and ignored)", a.CaptureMode)
		}
		out, err := openOutFile(call, a.ScreenshotOutFile)
		if err != nil {
			return nil, err
		}
		defer out.Close()
		opts, err := a.options()
		if err != nil {
			return nil, err
		}
		if a.PID == nil || (screenshot && a.WindowID == nil) {
			return nil, invalid("pid and window_id are required (from list_windows)")
		}
		// The accessibility tree of a minimized window is there to read; its screenshot
		// is not (window_minimized).
		win, err := resolveMinimized(ctx, d.b, call.Window, targetArgs{PID: a.PID, WindowID: a.WindowID})
		if err != nil {
			return nil, err
		}
		shoot := screenshot && (a.IncludeScreenshot == nil || *a.IncludeScreenshot || out != nil)
		if shoot {
			if err := notMinimized(win); err != nil {
				return nil, err
			}
		}
		var (
			img    *x11.Image
			capErr error
			wg     sync.WaitGroup
		)
		if shoot {
			wg.Add(1)
			go func() {
				defer wg.Done()
				img, capErr = d.b.Capture(ctx, x11.CaptureOptions{Window: win.ID, MayShow: d.mayShow(call, win)})
			}()
		}
		snap, err := d.ax.Snapshot(ctx, atspiWindow(win), walkBudget(ctx, opts))
		wg.Wait()
		if err != nil {
			return nil, refusal(err)
		}
		d.sessions.of(call.Session).Add(snap)
		return stateResult(win, snap, img, capErr, shoot, out)
	}
}

// stateResult renders a snapshot: a header line, the degradation or truncation if any,
// the rows; the structured elements; the screenshot, or with out, the screenshot written
// there.
func stateResult(win *x11.Window, snap *atspi.Snapshot, img *x11.Image, capErr error, shoot bool, out *outFile) (*tool.Result, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "window_id=%d pid=%d %s snapshot=%s elements=%d\n", win.ID, win.PID, strconv.Quote(clipTitle(win.Title)), snap.ID, len(snap.Elements))
	if snap.Degraded {
		fmt.Fprintf(&sb, "degraded: %s\n", snap.DegradedReason)
	}
	if snap.Truncated {
		fmt.Fprintf(&sb, "truncated: %s (%d elements of %d objects read; narrow with query or raise the bounds)\n",
			strings.Join(snap.Reasons, ","), len(snap.Elements), snap.Visited)
	}
	sb.WriteString(atspi.Markdown(snap.Elements))
	st := map[string]any{
		"window_id": win.ID, "pid": win.PID, "title": win.Title, "window_frame": win.Frame,
		"snapshot_id": snap.ID, "elements": snap.Elements, "element_count": len(snap.Elements),
		"returned_element_count": len(snap.Elements), "total_element_count": snap.Visited,
		"elements_complete": !snap.Truncated && !snap.Degraded, "truncated": snap.Truncated,
		"degraded": snap.Degraded, "walk_ms": float64(snap.Duration.Microseconds()) / 1000,
	}
	if snap.App != "" {
		st["app"] = snap.App
	}
	if snap.Truncated {
		st["truncation_reason"] = strings.Join(snap.Reasons, ",")
	}
	if snap.Degraded {
		st["degraded_reason"] = snap.DegradedReason
	}
	if snap.MatchedBy != "" {
		st["matched_by"] = snap.MatchedBy
	}
	if snap.Foreign > 0 {
		st["foreign_children_skipped"] = snap.Foreign
	}
	res := &tool.Result{Content: []tool.Content{tool.Text(sb.String())}, Structured: st}
	switch {
	case img != nil:
		st["screenshot_width"], st["screenshot_height"], st["screenshot_scale"] = img.Width, img.Height, img.Scale
		st["screenshot_mime_type"] = img.MIMEType
		st["screenshot_masked"] = maskedInfo(img)
		if t := maskedText(img); t != "" {
			res.Content[0].Text += "screenshot" + strings.TrimPrefix(t, ";") + "\n"
		}
		if out == nil {
			res.Content = append(res.Content, tool.Image(img.Data, img.MIMEType))
			break
		}
		if err := out.write(img.Data); err != nil {
			return nil, err
		}
		st["screenshot_file_path"] = out.path
	case shoot && capErr != nil:
		st["screenshot_error"] = capErr.Error()
	}
	return res, nil
}

func clipTitle(s string) string {
	if len(s) <= 120 {
		return s
	}
	cut := 120
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// setValueArgs are set_value's arguments.
type setValueArgs struct {
	elementArgs
	PID      *int            `json:"pid"`
	WindowID *uint32         `json:"window_id"`
	Value    json.RawMessage `json:"value"`
	Session  string          `json:"session"`
}

func (d *desk) setValue(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[setValueArgs](call)
	if err != nil {
		return nil, err
	}
	text, num, isNum, err := parseValue(a.Value)
	if err != nil {
		return nil, err
	}
	if !a.elementArgs.present() {
		return nil, invalid("set_value needs an element: element_token, or snapshot_id and element_index (from get_window_state)")
	}
	_, snap, el, err := d.element(ctx, call, targetArgs{PID: a.PID, WindowID: a.WindowID}, a.elementArgs)
	if err != nil {
		return nil, err
	}
	var out atspi.Outcome
	switch {
	case el.HasValue() && (isNum || !el.Editable):
		if !isNum {
			return nil, invalid("%s [%d] takes a number, not %q", el.Role, el.Index, clipTitle(text))
		}
		out, err = d.ax.SetValue(ctx, el, num)
	case el.Editable:
		if err := checkText(text); err != nil {
			return nil, err
		}
		out, err = d.ax.SetText(ctx, el, text)
	default:
		return nil, authz.Refuse(authz.CodeUnsupported, "%s [%d] has neither a Value nor an EditableText interface; use click or type_text", el.Role, el.Index)
	}
	if err != nil {
		return nil, refusal(err)
	}
	return outcomeResult(out, snap, el, nil), nil
}

// parseValue accepts a JSON string or number. A string that is a number counts as both.
func parseValue(raw json.RawMessage) (text string, num float64, isNum bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, false, invalid("value is required")
	}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", 0, false, invalid("value: %v", err)
		}
		if len(text) > MaxTextRunes*4 {
			return "", 0, false, invalid("value is %d bytes (at most %d)", len(text), MaxTextRunes*4)
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err == nil {
			return text, f, true, nil
		}
		return text, 0, false, nil
	}
	if err := json.Unmarshal(raw, &num); err != nil {
		return "", 0, false, invalid("value must be a string or a number")
	}
	return strconv.FormatFloat(num, 'g', -1, 64), num, true, nil
}

// outcomeResult reports an AT-SPI element action: the contract shape from what was read
// back (a11yAction), the element and the toolkit's evidence in the details.
func outcomeResult(out atspi.Outcome, snap *atspi.Snapshot, el *atspi.Element, extra map[string]any) *tool.Result {
	details := map[string]any{
		"effect": out.Effect, "route": out.Route, "delivery": deliveryBackground, "verified": out.Verified,
		"evidence": out.Evidence, "element_token": el.Token, "element_index": el.Index, "snapshot_id": snap.ID,
		"role": el.Role, "window_id": snap.Window.ID, "pid": snap.Window.PID,
	}
	if el.Name != "" {
		details["name"] = el.Name
	}
	maps.Copy(details, extra)
	text := fmt.Sprintf("%s (route %s, verified %v)", out.Effect, out.Route, out.Verified)
	if rb, ok := out.Evidence["read_back"]; ok {
		text += fmt.Sprintf("; read back %q", fmt.Sprint(rb))
	}
	res := tool.ActionResult(text, a11yAction(out), details)
	_, failed := out.Evidence["error"]
	res.IsError = failed
	return res
}
