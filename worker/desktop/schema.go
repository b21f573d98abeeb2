package desktop

import "encoding/json"

// prop is one JSON Schema property.
type prop map[string]any

func intProp(desc string, minimum, maximum int64) prop {
	return prop{"type": "integer", "description": desc, "minimum": minimum, "maximum": maximum}
}

func numProp(desc string) prop { return prop{"type": "number", "description": desc} }

func strProp(desc string) prop { return prop{"type": "string", "description": desc} }

func boundedStr(desc string, maxLen int) prop {
	return prop{"type": "string", "description": desc, "maxLength": maxLen}
}

func enumProp(desc string, values ...string) prop {
	return prop{"type": "string", "description": desc, "enum": values}
}

func boolProp(desc string) prop { return prop{"type": "boolean", "description": desc} }

func strArray(desc string, maxItems int) prop {
	return prop{"type": "array", "description": desc, "items": prop{"type": "string"}, "maxItems": maxItems}
}

// Shared properties.
var (
	pidProp      = intProp("Process id that owns the window (from list_windows).", 1, 1<<22)
	windowProp   = intProp("X window id (from list_windows).", 1, 1<<32-1)
	sessionProp  = strProp("Session label (informational; carries no authority).")
	scopeProp    = enumProp(`"desktop" makes x/y root-window coordinates; "window" (default) needs pid and window_id.`, "window", "desktop")
	deliveryProp = enumProp("How input reaches the window. background (the default on a display shared with a person): the session's own pointer and keyboard; the person's pointer and focus never move and nothing is raised; refused with background_unavailable where that cannot work. "+
		"foreground: the core pointer and keyboard after raising and focusing the window; on a shared display the person's active window and pointer are put back afterwards. On a display the session owns, the default is foreground. The result says which was used.", "background", "foreground")
	modifierProp = strArray(`Modifier keys held during the action: "ctrl", "shift", "alt", "super".`, 4)
	buttonProp   = enumProp("Mouse button (default left).", "left", "right", "middle")
	xProp        = numProp("X coordinate: window-relative when pid/window_id are given, else a desktop coordinate (needs scope \"desktop\").")
	yProp        = numProp("Y coordinate, like x.")
	// targetProp is the reference contract's target object, an alternative to pid and
	// window_id (a window) or scope "desktop" (the primary display).
	targetProp = prop{"description": `The target as an object: {"kind":"window","pid":P,"window_id":W} (same as pid and window_id) or {"kind":"desktop","display_id":"primary"} (same as scope "desktop"), or null. Not combined with contradicting pid, window_id or scope.`,
		"anyOf": []any{
			prop{"type": "object", "properties": prop{"kind": prop{"enum": []string{"window"}}, "pid": prop{"type": "integer", "minimum": 0}, "window_id": prop{"type": "integer", "minimum": 0}}, "required": []string{"kind", "pid", "window_id"}},
			prop{"type": "object", "properties": prop{"kind": prop{"enum": []string{"desktop"}}, "display_id": prop{"type": "string"}}, "required": []string{"kind", "display_id"}},
			prop{"type": "null"},
		}}
	outFileProp = strProp("Write the image to this absolute path (a new file replacing what is there) instead of returning it as image content. The path must be one the session may write.")
)

// schema returns an object schema that rejects unknown properties. session is always allowed.
func schema(required []string, props map[string]prop) json.RawMessage {
	all := map[string]prop{"session": sessionProp}
	for k, v := range props {
		all[k] = v
	}
	s := map[string]any{"type": "object", "properties": all, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // programmer error: schemas are literals
	}
	return b
}

// targetProps are the properties of a window target with window-relative coordinates.
func targetProps(extra map[string]prop) map[string]prop {
	p := map[string]prop{"pid": pidProp, "window_id": windowProp, "scope": scopeProp, "delivery_mode": deliveryProp, "target": targetProp}
	for k, v := range extra {
		p[k] = v
	}
	return p
}
