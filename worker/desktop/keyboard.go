package desktop

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// MaxTextRunes bounds type_text.
const MaxTextRunes = 20000

func (d *desk) keyboardSpecs() []spec {
	text := targetProps(elementProps(map[string]prop{"text": boundedStr("Text to type, any Unicode; newline is Return, tab is Tab.", MaxTextRunes*4),
		"delay_ms": intProp("Pause between characters in milliseconds (default 0), for applications that drop keys typed fast. The whole text must fit before the call's deadline.", 0, MaxTypeDelayMS)}))
	press := targetProps(map[string]prop{
		"key":       strProp(`Key name ("Return", "F5", "Page_Down", "a") or a combination ("ctrl+shift+t").`),
		"modifier":  modifierProp,
		"modifiers": modifierProp,
	})
	hot := targetProps(map[string]prop{"keys": prop{"type": "array", "items": prop{"type": "string"}, "minItems": 2, "maxItems": 8,
		"description": `Keys pressed together, modifiers first: ["ctrl", "shift", "t"].`}})
	return []spec{
		{name: "type_text", description: "Type text into the focused window or into pid/window_id, through the session's own keyboard (given the window's focus) or the core one after bringing the window to the front (delivery_mode). Characters missing from the keymap are typed through temporarily remapped keycodes. " +
			"With an element (element_token and its pid/window_id), the text is appended to an editable element through AT-SPI and read back (no focus change). " +
			"When typing stops part-way (the window went away or lost the focus), the result is an error with code type_text_incomplete saying how many characters arrived.",
			schema: schema([]string{"text"}, text), handler: d.typeText, args: tool.NewArgs[typeTextArgs]},
		{name: "press_key", description: "Press and release one key, optionally with modifiers, in the focused window or pid/window_id.",
			schema: schema([]string{"key"}, press), handler: d.pressKey, args: tool.NewArgs[pressKeyArgs], touches: tool.Touches{Pastes: tool.PastesWhen(pressKeyPastes)}},
		{name: "hotkey", description: "Press a key combination (modifiers then keys, released in reverse).",
			schema: schema([]string{"keys"}, hot), handler: d.hotkey, args: tool.NewArgs[hotkeyArgs], touches: tool.Touches{Pastes: tool.PastesWhen(hotkeyPastes)}},
	}
}

// keysReady prepares keyboard input to win (nil: wherever the focus is): it refuses while
// another client holds a grab of the keyboard the keys go through, before anything
// happens, then gives win the focus (the session's own keyboard's in the background,
// the core keyboard's after bringing win to the front otherwise) and refuses unless it got
// it. The same checks run again right before the first key (keyGuards).
func (d *desk) keysReady(ctx context.Context, call *tool.Call, dl *delivery, win *x11.Window, ev map[string]any) error {
	if dl.background() && win == nil {
		return authz.Refuse(authz.CodeBackgroundUnavailable,
			"no window has the focus and the session's own keyboard has none of its own to type into; nothing was sent. Name the window (pid, window_id)")
	}
	if err := d.keyboardFree(dl)(ctx); err != nil {
		return err
	}
	if win != nil {
		id := win.ID
		dl.afterKeys = func() { d.typed.note(id) }
	}
	return d.ready(ctx, call, dl, win, ev, true)
}

// keyTarget resolves an optional window for keyboard input; coordinates do not apply.
func (d *desk) keyTarget(ctx context.Context, known *x11.Window, t targetArgs) (*x11.Window, error) {
	if t.Scope == "desktop" && t.PID == nil {
		return nil, nil
	}
	return resolve(ctx, d.b, known, t)
}

// typeTextArgs are type_text's arguments.
type typeTextArgs struct {
	targetArgs
	elementArgs
	Text *string `json:"text"`
	// DelayMS is the pause between characters (0 to MaxTypeDelayMS).
	DelayMS *int `json:"delay_ms"`
}

func (d *desk) typeText(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[typeTextArgs](call)
	if err != nil {
		return nil, err
	}
	if a.Text == nil {
		return nil, invalid("text is required")
	}
	if err := checkText(*a.Text); err != nil {
		return nil, err
	}
	delay, err := typeDelay(ctx, a.DelayMS, *a.Text)
	if err != nil {
		return nil, err
	}
	if a.elementArgs.present() {
		return d.typeElement(ctx, call, a.targetArgs, a.elementArgs, *a.Text, delay)
	}
	win, err := d.keyTarget(ctx, call.Window, a.targetArgs)
	if err != nil {
		return nil, err
	}
	dl, err := d.deliveryFor(ctx, call, a.Delivery)
	if err != nil {
		if backgroundFallback(nil, err) {
			if res, ok, aerr := d.axTypeInto(ctx, call, win, *a.Text, err); ok {
				return res, aerr
			}
		}
		return nil, err
	}
	ev := map[string]any{}
	if err := d.keysReady(ctx, call, dl, win, ev); err != nil {
		return nil, err
	}
	field, why := d.focusedTextField(ctx, win, *a.Text)
	if field == nil {
		ev["read_back"] = "not read: " + why
	}
	got, err := d.typePaced(ctx, dl, win, *a.Text, delay)
	if err != nil {
		if got.offset == 0 {
			return nil, err // nothing was typed: refused as the first check or key found it
		}
		dl.finish(ctx, ev)
		return typeIncomplete(dl, *a.Text, got, err, map[string]any{"evidence": ev}), nil
	}
	st := got.stats
	ev["stats"] = st
	if delay > 0 {
		ev["delay_ms"] = delay.Milliseconds()
	}
	effect := inputEffect
	if field != nil {
		out := d.readBackTyped(ctx, field, *a.Text, ev)
		if out.mismatch {
			dl.finish(ctx, ev)
			return typeMismatch(dl, *a.Text, out.arrived, ev), nil
		}
		effect = out.effect
	}
	dl.finish(ctx, ev)
	msg := fmt.Sprintf("typed %d characters", st.Runes)
	switch effect {
	case tool.EffectConfirmed:
		msg += "; the focused field shows them (read back)"
	case tool.EffectSuspectedNoop:
		msg += "; but the focused field did not change (read back): the keys may have gone elsewhere or been ignored"
	}
	return tool.ActionResult(msg, inputAction(dl, effect, st.Runes),
		inputDetails(dl, effect == tool.EffectConfirmed, ev, map[string]any{"chars": st.Runes})), nil
}

// checkText refuses text TypeText would refuse, before anything happens.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return invalid("text is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > MaxTextRunes {
		return invalid("text has %d characters (at most %d)", n, MaxTextRunes)
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return invalid("text contains control character %U", r)
		}
	}
	return nil
}

// pressKeyArgs are press_key's arguments.
type pressKeyArgs struct {
	targetArgs
	Key      string   `json:"key"`
	Modifier []string `json:"modifier"`
	// Modifiers is the reference contract's name for Modifier; both may be given.
	Modifiers []string `json:"modifiers"`
}

func (d *desk) pressKey(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[pressKeyArgs](call)
	if err != nil {
		return nil, err
	}
	mods := append(append([]string{}, a.Modifier...), a.Modifiers...)
	combo, err := keyCombo(a.Key, mods)
	if err != nil {
		return nil, err
	}
	return d.pressCombo(ctx, call, a.targetArgs, combo, strings.Join(append(mods, a.Key), "+"))
}

// keyCombo parses press_key's key (itself possibly "ctrl+t") plus modifiers.
func keyCombo(key string, mods []string) (x11.KeyCombo, error) {
	if key == "" {
		return x11.KeyCombo{}, invalid("key is required")
	}
	combo, err := x11.ParseKeyCombo(key)
	if err != nil {
		return x11.KeyCombo{}, refusal(err)
	}
	ms, err := x11.ParseModifiers(mods)
	if err != nil {
		return x11.KeyCombo{}, refusal(err)
	}
	combo.Mods = append(ms, combo.Mods...)
	if len(combo.Mods)+len(combo.Keys) > 8 {
		return x11.KeyCombo{}, invalid("at most 8 keys at once")
	}
	return combo, nil
}

// hotkeyArgs are hotkey's arguments.
type hotkeyArgs struct {
	targetArgs
	Keys []string `json:"keys"`
}

func (d *desk) hotkey(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[hotkeyArgs](call)
	if err != nil {
		return nil, err
	}
	if len(a.Keys) < 2 {
		return nil, invalid("keys needs at least 2 entries (use press_key for one key)")
	}
	combo, err := x11.ParseKeyList(a.Keys)
	if err != nil {
		return nil, refusal(err)
	}
	return d.pressCombo(ctx, call, a.targetArgs, combo, strings.Join(a.Keys, "+"))
}

func (d *desk) pressCombo(ctx context.Context, call *tool.Call, t targetArgs, combo x11.KeyCombo, label string) (*tool.Result, error) {
	win, err := d.keyTarget(ctx, call.Window, t)
	if err != nil {
		return nil, err
	}
	dl, err := d.deliveryFor(ctx, call, t.Delivery)
	if err != nil {
		return nil, err
	}
	ev := map[string]any{}
	if err := d.keysReady(ctx, call, dl, win, ev); err != nil {
		return nil, err
	}
	if err := dl.dev.PressCombo(ctx, combo, d.keyGuards(dl, win)...); err != nil {
		return nil, err
	}
	dl.finish(ctx, ev)
	return keyResult(dl, "pressed "+label, 1, ev, map[string]any{"keys": label}), nil
}
