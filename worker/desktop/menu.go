package desktop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// MaxMenuLabelChars bounds one segment of invoke_menu's path.
const MaxMenuLabelChars = 200

func (d *desk) menuSpecs() []spec {
	props := map[string]prop{
		"pid": pidProp, "window_id": windowProp,
		"path": {"type": "array", "minItems": 1, "maxItems": atspi.MaxMenuDepth,
			"description": `Menu path from the menu bar down, one label per level: ["File", "Save As…"]. Labels are compared after trimming surrounding white space, exactly first, then ignoring case.`,
			"items":       prop{"type": "string", "minLength": 1, "maxLength": MaxMenuLabelChars}},
	}
	return []spec{
		{name: "invoke_menu", description: "Invoke an item of a window's menu bar by its path, through AT-SPI: each level is resolved in the application as it is at that moment (the menu bar entry path[0] is opened, then path[1] is looked for among the entries that appear, and so on) and the last item is activated. " +
			"The pointer and the focus do not move. A segment that is missing, ambiguous or disabled, a submenu named as the last segment, or an item without submenu before it, is refused naming the segment and what the level held; nothing further is invoked and the menus opened are closed again. Never falls back to pointer input.",
			schema: schema([]string{"pid", "window_id", "path"}, props), handler: d.invokeMenu, args: tool.NewArgs[menuArgs]},
	}
}

// menuArgs are invoke_menu's arguments.
type menuArgs struct {
	PID      *int     `json:"pid"`
	WindowID *uint32  `json:"window_id"`
	Path     []string `json:"path"`
	Session  string   `json:"session"`
}

// check validates the path without touching the desktop.
func (a menuArgs) check() error {
	if a.PID == nil || a.WindowID == nil {
		return invalid("pid and window_id are required (from list_windows)")
	}
	if len(a.Path) == 0 || len(a.Path) > atspi.MaxMenuDepth {
		return invalid("path has %d segments: want 1–%d labels, from the menu bar down", len(a.Path), atspi.MaxMenuDepth)
	}
	for i, s := range a.Path {
		switch n := utf8.RuneCountInString(s); {
		case !utf8.ValidString(s):
			return invalid("path[%d] is not valid UTF-8", i)
		case n > MaxMenuLabelChars:
			return invalid("path[%d] is %d characters (at most %d)", i, n, MaxMenuLabelChars)
		case strings.TrimSpace(s) == "":
			return invalid("path[%d] is empty: every segment names a menu entry", i)
		}
	}
	return nil
}

func (d *desk) invokeMenu(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[menuArgs](call)
	if err != nil {
		return nil, err
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	win, err := resolve(ctx, d.b, call.Window, targetArgs{PID: a.PID, WindowID: a.WindowID})
	if err != nil {
		return nil, err
	}
	// An entry named Paste reads the clipboard into the application: the same check as
	// activating a Paste element, made on the label asked for (entries match it exactly or
	// ignoring case) before any menu opens.
	if err := d.checkPasteElement(ctx, call, &atspi.Element{Name: a.Path[len(a.Path)-1]}); err != nil {
		return nil, err
	}
	out, err := d.ax.InvokeMenu(ctx, atspiWindow(win), a.Path)
	if err != nil {
		return menuFailure(err, win.ID)
	}
	effect := tool.EffectUnverifiable
	if !out.Steps[len(out.Steps)-1].Returned {
		effect = tool.EffectSuspectedNoop
	}
	labels := make([]string, len(out.Steps))
	for i, s := range out.Steps {
		labels[i] = s.Name
	}
	text := fmt.Sprintf("invoked %q of window %d (route accessibility, effect %s", strings.Join(labels, " > "), win.ID, effect)
	if out.Closed {
		text += "; the menus closed"
	}
	text += ")"
	details := map[string]any{"pid": win.PID, "window_id": win.ID, "steps": out.Steps, "menus_closed": out.Closed}
	if !out.Closed {
		details["menus_closed_after"] = out.ClosedAfter // closed by invoke_menu, not the toolkit
	}
	if out.App != "" {
		details["app"] = out.App
	}
	return tool.ActionResult(text, tool.Action{
		Effect:   effect,
		Route:    tool.RouteAccessibility,
		Delivery: tool.Delivered(tool.DeliveryBackground, len(out.Steps)),
	}, details), nil
}

// menuFailure reports a path that failed. Before the first menu opened (path[0]) nothing
// happened: a refusal (outcome not_started). Past it, menus were opened (and closed again),
// which is not "nothing happened": an error result with the refusal's code and message.
func menuFailure(err error, window uint32) (*tool.Result, error) {
	ferr := menuRefusal(err, window)
	me, isPath := atspi.MenuPathError(err)
	r, isRefusal := ferr.(*authz.Refusal)
	if !isPath || !isRefusal || me.Hop == 0 {
		return nil, ferr
	}
	text := fmt.Sprintf("%s: %s (the menus down to path[%d] were opened to look, then closed; nothing was invoked)", r.Code, r.Message, me.Hop-1)
	return &tool.Result{IsError: true, Content: []tool.Content{tool.Text(text)},
		Structured: map[string]any{"error_code": string(r.Code), "error": r.Message}, Details: map[string]any{"opened_to": me.Hop - 1}}, nil
}

// menuRefusal maps InvokeMenu's errors to refusals. A path that does not fit the menus
// (missing, ambiguous, a submenu where an item belongs or the reverse) is
// menu_path_not_found: the call was well formed, the application's menus differ; a
// disabled entry or a submenu that would not open is unsupported; a window without a menu
// bar is unsupported.
func menuRefusal(err error, window uint32) error {
	if me, ok := atspi.MenuPathError(err); ok {
		code := authz.CodeMenuPathNotFound
		if me.Reason == atspi.MenuDisabled || me.Reason == atspi.MenuDidNotOpen {
			code = authz.CodeUnsupported
		}
		return authz.Refuse(code, "%s", strings.TrimPrefix(me.Error(), "atspi: "))
	}
	switch {
	case errors.Is(err, atspi.ErrNoMenuBar):
		return authz.Refuse(authz.CodeUnsupported, "window %d: %s", window, strings.TrimPrefix(err.Error(), "atspi: "))
	case errors.Is(err, atspi.ErrInvalidMenuPath):
		return authz.Refuse(authz.CodeInvalidArguments, "%s", strings.TrimPrefix(err.Error(), "atspi: "))
	}
	return refusal(err)
}
