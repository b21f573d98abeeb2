package tool

import "encoding/json"

// The output schemas of the shipped tools: for each, the JSON Schema of the structured
// value of every successful result, which tools/list declares (client.ToolInfo.OutputSchema).
// The MCP proxy advertises it beside the shapes of a refusal and of a tool-level error,
// which every tool can return too (mcpproxy.OutputSchema).
//
// The action tools' schema is the contract's closed ActionSchema. The other tools'
// schemas are open, as the contract's are: they name the fields every success carries
// (required) and the types of the fields a client reads, and admit the fields cua-host
// adds. None uses "const" (some clients reject it): a fixed value is a one-value enum.

// OutputSchema returns the output schema of the shipped tool name, or nil for a tool that
// declares none. Every tool that returns a structured value on success declares one: a
// client that validates (the MCP TypeScript SDK does) then requires structured content on
// every success, so a tool whose successes may lack it must not.
func OutputSchema(name string) json.RawMessage {
	s, ok := outputSchemas[name]
	if !ok {
		return nil
	}
	return json.RawMessage(s)
}

// OutputSchemaNames lists the tools OutputSchema knows, in no particular order.
func OutputSchemaNames() []string {
	names := make([]string, 0, len(outputSchemas))
	for n := range outputSchemas {
		names = append(names, n)
	}
	return names
}

// Fragments shared by several schemas.
const (
	nullableString = `{"anyOf":[{"type":"string"},{"type":"null"}]}`
	// scopeState is the capture-scope part of the session tools' results.
	scopeState = `"session":{"type":"string"},"capture_scope":{"type":"string","enum":["auto","window","desktop"]},` +
		`"effective_scope":{"type":"string","enum":["window","desktop"]},"desktop_unlocked":{"type":"boolean"},` +
		`"escalation_reason":{"anyOf":[{"type":"string","enum":["ax_tree_pixel_mismatch","background_delivery_failed","foreground_ineffective","no_window_target","other"]},{"type":"null"}]},` +
		`"escalation_detail":` + nullableString
	scopeRequired = `"session","capture_scope","effective_scope","desktop_unlocked","escalation_reason","escalation_detail"`
	// sessionSummary is a session or label in the contract's session-summary shape.
	sessionSummary = `{"type":"object","required":["session","implicit","state","client_kind","transport","cursor_visible","recording_active","idle_seconds","expires_in_seconds"],"properties":{` +
		`"session":{"type":"string"},"implicit":{"type":"boolean"},"state":{"type":"string","enum":["active","ending"]},` +
		`"client_kind":{"type":"string","enum":["cli","direct","mcp","python_sdk","typescript_sdk"]},"transport":{"type":"string","enum":["cli","daemon","mcp_stdio","mcp_http"]},"cursor_visible":{"type":"boolean"},"recording_active":{"type":"boolean"},` +
		`"idle_seconds":{"type":"integer","minimum":0},"expires_in_seconds":{"type":"integer","minimum":0}}}`
	// capture is the part of the image results common to get_desktop_state and zoom.
	capture = `"width":{"type":"integer","minimum":0},"height":{"type":"integer","minimum":0},"scale":{"type":"number"},` +
		`"mime_type":{"type":"string","enum":["image/png","image/jpeg"]},"capture_route":{"type":"string"}`
	// snapshot is get_window_state's and get_accessibility_tree's result.
	snapshot = `{"type":"object","required":["window_id","pid","snapshot_id","elements","element_count","elements_complete","truncated","degraded"],"properties":{` +
		`"window_id":{"type":"integer","minimum":0},"pid":{"type":"integer"},"title":{"type":"string"},"window_frame":{"type":"object"},` +
		`"snapshot_id":{"type":"string"},"elements":{"type":["array","null"],"items":{"type":"object"}},"element_count":{"type":"integer","minimum":0},` +
		`"returned_element_count":{"type":"integer","minimum":0},"total_element_count":{"type":"integer","minimum":0},` +
		`"elements_complete":{"type":"boolean"},"truncated":{"type":"boolean"},"degraded":{"type":"boolean"},"walk_ms":{"type":"number"},` +
		`"screenshot_width":{"type":"integer"},"screenshot_height":{"type":"integer"},"screenshot_mime_type":{"type":"string"},` +
		`"screenshot_masked":{"type":["object","null"]},"screenshot_file_path":{"type":"string"}}}`
	// cursorMotion, cursorTheme and cursorVisual are the agent cursor's parts, in the
	// contract's shape.
	cursorMotion = `{"type":"object","required":["start_handle","end_handle","arc_size","arc_flow","spring","glide_duration_ms","dwell_after_click_ms","idle_hide_ms","turn_radius"],"properties":{` +
		`"start_handle":{"type":"number"},"end_handle":{"type":"number"},"arc_size":{"type":"number"},"arc_flow":{"type":"number"},"spring":{"type":"number"},` +
		`"glide_duration_ms":{"type":"number"},"dwell_after_click_ms":{"type":"number"},"idle_hide_ms":{"type":"number"},"turn_radius":{"type":"number"}}}`
	cursorTheme = `{"type":"object","required":["id","version","profile","reduced_motion","fallback"],"properties":{` +
		`"id":{"type":"string"},"version":{"type":"string"},"profile":{"type":"string"},"reduced_motion":{"type":"string","enum":["auto","on","off"]},"fallback":` + nullableString + `}}`
	cursorAction = `{"type":"string","enum":["idle","observe","click","drag","scroll","text","key","navigate","app","transfer","record","system"]}`
	cursorVisual = `{"type":"object","required":["requested_action","resolved_action","modifiers","phase","frame","preempted_count"],"properties":{` +
		`"requested_action":` + cursorAction + `,"resolved_action":` + cursorAction + `,"modifiers":{"type":"array","items":{"type":"string"}},` +
		`"phase":{"type":"string"},"frame":{"type":"integer","minimum":0},"preempted_count":{"type":"integer","minimum":0}}}`
	// recordingState is the recording tools' result.
	recordingState = `{"type":"object","required":["enabled","recording","active","available","owner","journal","name","turns","next_turn",` +
		`"max_turns","turns_left","max_duration_ms","duration_ms","duration_left_ms","started","stopped","stop_reason"],"properties":{` +
		`"enabled":{"type":"boolean"},"recording":{"type":"boolean"},"active":{"type":"boolean"},"available":{"type":"boolean"},"owner":{"type":"string"},` +
		`"journal":{"type":"object","required":["kept","screenshots","text"],"properties":{"kept":{"type":"boolean"},"screenshots":{"type":"boolean"},"text":{"type":"boolean"}}},` +
		`"name":` + nullableString + `,"turns":{"type":"integer","minimum":0},"next_turn":{"type":"integer","minimum":1},` +
		`"max_turns":{"type":["integer","null"],"minimum":1},"turns_left":{"type":["integer","null"],"minimum":0},` +
		`"max_duration_ms":{"type":["integer","null"],"minimum":1},"duration_ms":{"type":"integer","minimum":0},"duration_left_ms":{"type":["integer","null"],"minimum":0},` +
		`"started":` + nullableString + `,"stopped":` + nullableString + `,` +
		`"stop_reason":{"anyOf":[{"type":"string","enum":["stopped","max_turns","max_duration","session_ended"]},{"type":"null"}]},` +
		`"output_dir":{"type":"null"},"video_active":{"type":"boolean"},"last_video_path":{"type":"null"},"last_error":` + nullableString + `}}`
	clipboard = `"supported":{"type":"boolean"},"types":{"type":"array","items":{"type":"string"}},` +
		`"privacy_sensitive":{"type":"boolean"},"content_redacted_from_telemetry":{"type":"boolean"}`
)

// outputSchemas maps each shipped tool to its output schema.
var outputSchemas = map[string]string{
	// The action tools (the contract's closed shape).
	"click": actionSchema, "double_click": actionSchema, "right_click": actionSchema, "move_cursor": actionSchema,
	"mouse_button_down": actionSchema, "mouse_button_up": actionSchema, "drag": actionSchema, "scroll": actionSchema,
	"type_text": actionSchema, "press_key": actionSchema, "hotkey": actionSchema, "set_value": actionSchema,
	"set_window_frame": actionSchema, "invoke_menu": actionSchema,
	"mouse_drag": actionSchema, "parallel_mouse_drag": actionSchema,

	// Observation.
	"list_windows": `{"type":"object","required":["windows","count"],"properties":{"windows":{"type":["array","null"],"items":{"type":"object"}},"count":{"type":"integer","minimum":0}}}`,
	"list_apps":    `{"type":"object","required":["apps","count"],"properties":{"apps":{"type":["array","null"],"items":{"type":"object"}},"count":{"type":"integer","minimum":0}}}`,
	"get_screen_size": `{"type":"object","required":["width","height","scale_factor"],"properties":{` +
		`"width":{"type":"number"},"height":{"type":"number"},"scale_factor":{"type":"number"}}}`,
	"get_cursor_position": `{"type":"object","required":["x","y"],"properties":{"x":{"type":"number"},"y":{"type":"number"},` +
		`"pointer":{"type":"string","enum":["core","session"]},"available":{"type":"boolean"},"source":{"type":"string"}}}`,
	"get_desktop_state": `{"type":"object","required":["platform","display","screenshot_width","screenshot_height","screen_width","screen_height","scale_factor","screenshot_mime_type"],"properties":{` +
		`"platform":{"type":"string","enum":["macos","linux","windows"]},"display":{"type":"string"},` +
		`"screen_width":{"type":"integer"},"screen_height":{"type":"integer"},"scale_factor":{"type":"number"},` +
		`"screenshot_width":{"type":"integer"},"screenshot_height":{"type":"integer"},"screenshot_mime_type":{"type":"string","enum":["image/png","image/jpeg"]},` +
		`"screenshot_file_path":{"type":"string"},"windows":{"type":["array","null"],"items":{"type":"object"}},"masked":{"type":["object","null"]},` + capture + `}}`,
	"zoom": `{"type":"object","required":["window_id","pid","width","height","mime_type"],"properties":{` +
		`"window_id":{"type":"integer","minimum":0},"pid":{"type":"integer"},"region":{"type":"object"},"masked":{"type":["object","null"]},` + capture + `}}`,
	"get_window_state":       snapshot,
	"get_accessibility_tree": snapshot,
	"verify_state": `{"type":"object","required":["status","stable","elapsed_ms","samples","predicates"],"properties":{` +
		`"status":{"type":"string","enum":["satisfied","unsatisfied","unknown"]},"stable":{"type":"boolean"},` +
		`"elapsed_ms":{"type":"integer","minimum":0},"samples":{"type":"integer","minimum":0},` +
		`"predicates":{"type":"array","items":{"type":"object","required":["index","status","unknown_reason","observed_json"],"properties":{` +
		`"index":{"type":"integer","minimum":0},"status":{"type":"string","enum":["satisfied","unsatisfied","unknown"]},` +
		`"unknown_reason":{"anyOf":[{"type":"string","enum":["invalid_predicate","unsupported_predicate","untrusted_source","multi_match","target_missing","observation_unavailable","stability_unproven"]},{"type":"null"}]},` +
		`"observed_json":` + nullableString + `}}}}}`,

	// Applications and windows.
	"launch_app": `{"type":"object","required":["effect","route","pid","executable","window_ids"],"properties":{` +
		`"effect":{"type":"string","enum":["launched"]},"route":{"type":"string","enum":["exec"]},"verified":{"type":"boolean"},` +
		`"pid":{"type":"integer"},"executable":{"type":"string"},"argv":{"type":"array","items":{"type":"string"}},"command":{"type":"string"},` +
		`"desktop_id":{"type":"string"},"declared":{"type":"boolean"},"untrusted_x_client":{"type":"boolean"},` +
		`"window_ids":{"type":"array","items":{"type":"integer","minimum":0}},"windows":{"type":["array","null"],"items":{"type":"object"}},` +
		`"window_timed_out":{"type":"boolean"},"exited":{"type":"boolean"},"exit_code":{"type":"integer"},` +
		`"focus_restored":{"type":"boolean"},"warnings":{"type":"array","items":{"type":"string"}},` +
		`"window_drawn":{"type":"boolean"},"drawn_after_ms":{"type":"integer","minimum":0}}}`,
	"kill_app": `{"type":"object","required":["effect","route","signal","verified","pid"],"properties":{` +
		`"effect":{"type":"string","enum":["terminated"]},"route":{"type":"string","enum":["signal"]},` +
		`"signal":{"type":"string","enum":["SIGTERM","SIGKILL"]},"verified":{"type":"boolean"},"pid":{"type":"integer"},"evidence":{"type":"object"}}}`,
	"bring_to_front": `{"type":"object","required":["effect","route","verified","window_id","pid"],"properties":{` +
		`"effect":{"type":"string","enum":["activated"]},"route":{"type":"string"},"verified":{"type":"boolean"},` +
		`"window_id":{"type":"integer","minimum":0},"pid":{"type":"integer"},"evidence":{"type":"object"}}}`,
	"clipboard_read": `{"type":"object","required":["supported","types","text","privacy_sensitive","content_redacted_from_telemetry"],"properties":{` +
		clipboard + `,"text":` + nullableString + `}}`,
	"clipboard_write": `{"type":"object","required":["supported","written_type","types","privacy_sensitive","content_redacted_from_telemetry"],"properties":{` +
		clipboard + `,"written_type":{"type":"string"}}}`,

	// Credentials: handles and non-secret attributes; type_secret is an action.
	"find_credentials": `{"type":"object","required":["credentials"],"properties":{"credentials":{"type":"array","items":{"type":"object","required":["handle","label","attributes"],"properties":{` +
		`"handle":{"type":"string"},"label":{"type":"string"},"attributes":{"type":"object","additionalProperties":{"type":"string"}}}}}}}`,
	"type_secret": actionSchema,

	// The agent cursor.
	"set_agent_cursor_enabled": `{"type":"object","required":["session","enabled"],"properties":{"session":{"type":"string"},"enabled":{"type":"boolean"}}}`,
	"set_agent_cursor_motion":  `{"type":"object","required":["session","motion"],"properties":{"session":{"type":"string"},"motion":` + cursorMotion + `}}`,
	"set_agent_cursor_theme":   `{"type":"object","required":["session","theme"],"properties":{"session":{"type":"string"},"theme":` + cursorTheme + `}}`,
	"get_agent_cursor_state": `{"type":"object","required":["session","enabled","position","theme","visual_state","motion"],"properties":{` +
		`"session":{"type":"string"},"enabled":{"type":"boolean"},` +
		`"position":{"type":"object","required":["x","y"],"properties":{"x":{"type":"number"},"y":{"type":"number"}}},` +
		`"theme":` + cursorTheme + `,"visual_state":` + cursorVisual + `,"motion":` + cursorMotion + `}}`,

	// The session and the worker.
	"get_session": sessionSummary,
	"end_session": `{"type":"object","required":["session","active"],"properties":{"session":{"type":"string"},"active":{"type":"boolean","enum":[false]}}}`,
	"start_session": `{"type":"object","required":[` + scopeRequired + `,"active","revived"],"properties":{` + scopeState +
		`,"active":{"type":"boolean"},"revived":{"type":"boolean"}}}`,
	"list_sessions": `{"type":"object","required":["sessions","next_cursor"],"properties":{` +
		`"sessions":{"type":"array","items":` + sessionSummary + `},"next_cursor":` + nullableString + `}}`,
	"escalate_session":  `{"type":"object","required":[` + scopeRequired + `],"properties":{` + scopeState + `}}`,
	"get_session_state": `{"type":"object","required":[` + scopeRequired + `],"properties":{` + scopeState + `}}`,
	// The recording tools: the calling session's running or last recording.
	"start_recording":     recordingState,
	"stop_recording":      recordingState,
	"get_recording_state": recordingState,
	"health_report": `{"type":"object","required":["pid","generation","protocol_version","display","private_display","backends","sessions"],"properties":{` +
		`"pid":{"type":"integer"},"generation":{"type":"string"},"protocol_version":{"type":"integer","minimum":0},` +
		`"display":{"type":"string"},"private_display":{"type":"boolean"},"sessions":{"type":"integer","minimum":0},` +
		`"backends":{"type":"array","items":{"type":"object","required":["name","available"],"properties":{"name":{"type":"string"},"available":{"type":"boolean"},"detail":{"type":"string"}}}}}}`,
	"get_config": `{"type":"object","required":["session","policy","display","ceiling","limits","protocol_version","tool_contract_version"],"properties":{` +
		`"session":{"type":"object"},"policy":{"type":"object"},"display":{"type":"object"},"ceiling":{"type":"object"},` +
		`"limits":{"type":"object"},"protocol_version":{"type":"integer","minimum":0},"tool_contract_version":{"type":"string"}}}`,
}
