package authz

import "sync"

// MCP annotation sets used by the shipped tools.
var (
	annReadOnly    = Annotations{ReadOnly: true, Idempotent: true}
	annAction      = Annotations{}
	annIdempotent  = Annotations{Idempotent: true}
	annDestructive = Annotations{Destructive: true}
	annEndSession  = Annotations{Destructive: true, Idempotent: true}
	// annMenu: a menu item may do anything the application does, outside the desktop too.
	annMenu = Annotations{Destructive: true, OpenWorld: true}
)

// active is an exposed tool whose resource checks are enforced.
func active(tool, summary string, class Class, res ResourceKind, op Operation, shape Shape, ann Annotations, standard Behavior, refusal Code) Entry {
	return Entry{
		Tool: tool, Summary: summary, Class: class, Resource: res, Operation: op, Shape: shape, Annotations: ann,
		State: StateActive, Standard: standard, Bounded: ManifestScoped, Unrestricted: Allow, Refusal: refusal,
	}
}

// MetadataOnly returns the entry of an exposed tool that touches no protected resource:
// allowed in standard and unrestricted mode, manifest-listed in bounded mode. Test workers
// use it to classify their test-only tools.
func MetadataOnly(tool, summary string, class Class, res ResourceKind, ann Annotations) Entry {
	return Entry{
		Tool: tool, Summary: summary, Class: class, Resource: res, Operation: OpNone, Shape: ShapeNone, Annotations: ann,
		State: StateMetadataOnly, Standard: Allow, Bounded: ManifestScoped, Unrestricted: Allow, Refusal: CodeOutsideManifest,
	}
}

// notExposed is a reference tool cua-host does not ship.
func notExposed(tool, summary string, class Class, res ResourceKind) Entry {
	return Entry{
		Tool: tool, Summary: summary, Class: class, Resource: res, Operation: OpNone, Shape: ShapeNone,
		State: StateNotExposed, Standard: Deny, Bounded: Deny, Unrestricted: Deny, Refusal: CodeUnsupported,
	}
}

// shippedEntries is the reviewed table: every tool a shipped worker registers, and the
// reference system's tools cua-host does not expose. Changing it changes docs/tools.md
// (go generate ./authz) and `cua-host inventory`.
func shippedEntries() []Entry {
	const (
		req = CodeAuthorizationRequired
		out = CodeOutsideManifest
	)
	ptr, kbd := ShapePointer, ShapeKeyboard
	return []Entry{
		// Builtins: the worker and the calling session.
		MetadataOnly("health_report", "Worker pid, generation, protocol version and backend availability.", R0, ResourceNone, annReadOnly),
		MetadataOnly("get_session", "The calling session's label, mode, expiry and manifest hash.", R0, ResourceSession, annReadOnly),
		MetadataOnly("end_session", "End the calling session (or one of its labels); every later call is refused with session_ended.", R1, ResourceSession, annEndSession),
		MetadataOnly("start_session", "Start or revive a public label inside the calling session; labels carry no authority.", R1, ResourceSession, annIdempotent),
		MetadataOnly("list_sessions", "The calling session and its labels; other sessions are never visible.", R0, ResourceSession, annReadOnly),
		MetadataOnly("get_session_state", "Deprecated: the session's capture scope, fixed by the host.", R0, ResourceSession, annReadOnly),
		MetadataOnly("escalate_session", "Deprecated: records the request; the capture scope stays as the host fixed it.", R2, ResourceSession, annIdempotent),
		MetadataOnly("get_config", "The worker's effective configuration (read-only).", R0, ResourceNone, annReadOnly),

		// Recordings: named spans of the calling session's calls in the journal the host
		// keeps. They change only the session's own state; the host alone decides whether
		// there is a journal and what it keeps.
		MetadataOnly("start_recording", "Mark the calling session's calls that follow as a named recording in the host's journal, with turn and time budgets (needs --journal).", R1, ResourceSession, annIdempotent),
		MetadataOnly("stop_recording", "End the calling session's recording; its turns, duration and why it stopped.", R1, ResourceSession, annIdempotent),
		MetadataOnly("get_recording_state", "The calling session's recording: running, name, turns, budgets left, why the last one stopped; what the host's journal keeps.", R0, ResourceSession, annReadOnly),

		// The session's agent cursor: its own presentation, no protected resource.
		MetadataOnly("set_agent_cursor_enabled", "Show or hide the calling session's agent cursor.", R1, ResourceSession, annIdempotent),
		MetadataOnly("set_agent_cursor_motion", "Set how the calling session's agent cursor moves.", R1, ResourceSession, annIdempotent),
		MetadataOnly("set_agent_cursor_theme", "Select an installed theme for the calling session's agent cursor.", R1, ResourceSession, annIdempotent),
		MetadataOnly("get_agent_cursor_state", "The calling session's agent cursor: enabled, position, theme, motion.", R0, ResourceSession, annReadOnly),

		// Observation.
		MetadataOnly("get_screen_size", "Desktop size in pixels.", R0, ResourceNone, annReadOnly),
		MetadataOnly("get_cursor_position", "Pointer position in desktop coordinates.", R0, ResourceNone, annReadOnly),
		active("list_windows", "Top-level windows with pid, title, class and frame.", R2, ResourceWindowList, OpObserve, ShapeNone, annReadOnly, Allow, out),
		active("list_apps", "Processes owning windows, with executable and window ids.", R2, ResourceWindowList, OpObserve, ShapeNone, annReadOnly, Allow, out),
		active("get_desktop_state", "Screenshot of the whole display plus the window list.", R3, ResourceDisplay, OpObserve, ShapeDisplay, annReadOnly, RequireGrant, req),
		active("zoom", "Full-resolution capture of a region of one window.", R2, ResourceWindow, OpObserve, ShapeWindow, annReadOnly, RequireGrant, req),
		active("get_window_state", "One window's accessibility tree and screenshot.", R3, ResourceWindow, OpObserve, ShapeWindow, annReadOnly, RequireGrant, req),
		active("get_accessibility_tree", "One application's or window's accessibility tree.", R2, ResourceWindow, OpObserve, ShapeWindow, annReadOnly, RequireGrant, req),
		active("verify_state", "Poll predicates on one window (its existence and frame, accessible elements) until they hold stably or time runs out.", R2, ResourceWindow, OpObserve, ShapeWindow, annReadOnly, RequireGrant, req),

		// Pointer input.
		active("click", "Click in a window (window-relative) or on the desktop (scope desktop).", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("double_click", "Double-click, like click.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("right_click", "Right-click, like click.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("move_cursor", "Move the pointer, like click.", R1, ResourceWindow, OpInput, ptr, annIdempotent, RequireGrant, req),
		active("mouse_button_down", "Press and hold a button (released at session end).", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("mouse_button_up", "Release a button.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("drag", "Press, move and release between two points.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("scroll", "Turn the mouse wheel at a point.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("mouse_drag", "Move a button the session holds (mouse_button_down) to a point, without releasing it.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),
		active("parallel_mouse_drag", "Run 2–8 drags at once inside one window, each on a temporary XInput2 master pointer.", R1, ResourceWindow, OpInput, ptr, annAction, RequireGrant, req),

		// Keyboard and element input.
		active("type_text", "Type text into a window (default: the focused one).", R1, ResourceWindow, OpInput, kbd, annAction, RequireGrant, req),
		active("press_key", "Press one key or combination in a window (default: the focused one).", R1, ResourceWindow, OpInput, kbd, annAction, RequireGrant, req),
		active("hotkey", "Press a key combination in a window (default: the focused one).", R1, ResourceWindow, OpInput, kbd, annAction, RequireGrant, req),
		active("set_value", "Set an accessible element's value through AT-SPI.", R1, ResourceWindow, OpInput, ShapeWindow, annIdempotent, RequireGrant, req),
		active("invoke_menu", "Invoke a menu bar item by its path, resolved level by level through AT-SPI.", R1, ResourceWindow, OpInput, ShapeWindow, annMenu, RequireGrant, req),

		// Windows and applications.
		active("bring_to_front", "Raise a window and focus it.", R1, ResourceWindow, OpInput, ShapeWindow, annIdempotent, RequireGrant, req),
		active("set_window_frame", "Move and resize a window.", R1, ResourceWindow, OpInput, ShapeWindow, annIdempotent, RequireGrant, req),
		active("launch_app", "Start an application; its windows belong to the session.", R1, ResourceApplication, OpLaunch, ShapeExecutable, annAction, RequireGrant, out),
		active("kill_app", "Stop a process (SIGTERM, then SIGKILL).", R3, ResourceProcess, OpTerminate, ShapeProcess, annDestructive, RequireGrant, CodeForeignProcessTermination),

		// Clipboard.
		active("clipboard_read", "Read the clipboard as text.", R2, ResourceClipboard, OpObserve, ShapeClipboard, annReadOnly, RequireGrant, req),
		active("clipboard_write", "Write text to the clipboard.", R1, ResourceClipboard, OpInput, ShapeClipboard, annIdempotent, Allow, out),

		// Credentials the operator made available: the agent lists their names and has
		// one typed like type_text, never seeing the secret.
		MetadataOnly("find_credentials", "List the handles, labels and non-secret attributes of the credentials the operator made available (never a secret).", R0, ResourceNone, annReadOnly),
		active("type_secret", "Type a credential's secret into a window's focused password field like type_text; the agent never sees it.", R1, ResourceWindow, OpInput, kbd, annAction, RequireGrant, req),

		// Reference tools cua-host does not expose.
		notExposed("set_config", "The configuration is fixed by the host.", R2, ResourceNone),
		notExposed("check_permissions", "macOS TCC only.", R2, ResourceNone),
		notExposed("screenshot", "Removed in the reference; use get_desktop_state or zoom.", R3, ResourceDisplay),
		notExposed("replay_trajectory", "Replays recorded input.", R3, ResourceDisplay),
		notExposed("page", "Browser page scripting.", R3, ResourceWindow),
		notExposed("browser_navigate", "Browser adapters.", R2, ResourceWindow),
		notExposed("browser_set_input_files", "Browser file egress.", R3, ResourceWindow),
		notExposed("run_shell", "Shell and network access are never exposed.", R3, ResourceNone),
	}
}

var (
	shippedOnce sync.Once
	shipped     *Inventory
)

// DefaultInventory returns the shipped inventory. It is built once and shared.
func DefaultInventory() *Inventory {
	shippedOnce.Do(func() {
		inv, err := NewInventory(shippedEntries()...)
		if err != nil {
			panic(err) // programmer error in the table; TestDefaultInventory catches it
		}
		shipped = inv
	})
	return shipped
}
