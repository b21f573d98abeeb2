package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// Options configure Register.
type Options struct {
	// Logger receives debug logs; nil discards.
	Logger *slog.Logger
	// Unavailable says why the backend is nil (the display could not be opened). It is
	// shown in every refusal and in the x11 capability.
	Unavailable error
	// Accessibility is the AT-SPI client of the accessibility tools; the caller keeps
	// ownership. Nil makes Register create one on $DBUS_SESSION_BUS_ADDRESS that connects
	// on first use and closes with the backend.
	Accessibility *atspi.Client
	// NoSessionDevices keeps sessions from getting input devices of their own (for a
	// window manager that misbehaves with a second pointer): background input then goes
	// through accessibility only, or is refused with background_unavailable.
	NoSessionDevices bool
	// Credentials is the store of find_credentials and type_secret; nil refuses both with
	// unsupported. The caller keeps ownership.
	Credentials Credentials
}

// desk is the registered tools' shared state.
type desk struct {
	b   *x11.Backend
	log *slog.Logger
	// creds is the credential store; nil when the host configured none.
	creds      Credentials
	ax         *atspi.Client // nil without a backend
	sessions   *sessionStore // element snapshots per session
	seats      *seatStore    // input devices per session
	focusWatch focusWatches  // windows watched after background input (watchFocus)
	cursors    *cursorStore  // agent cursors per session
	holds      heldButtons   // buttons each session pressed with mouse_button_down
	// foreground keeps foreground delivery on a shared display for retries (foreground.go).
	foreground *foregroundGate
	// typed is when keys last went to each window (typedwin.go).
	typed typedWindows
}

// spec is one tool before registration. Its MCP annotations come from the inventory
// (Annotations), its output schema from tool.OutputSchema.
type spec struct {
	name        string
	description string
	schema      json.RawMessage
	handler     tool.Handler
	// args returns the tool's zero argument struct (tool.NewArgs): the worker decodes each
	// call into it once and the handler reads it with tool.ArgsOf.
	args func() any
	// touches is what a call touches beyond the inventory's shape (the paste keys, the
	// files it names, the program it launches); Register adds Window for a schema taking
	// pid and window_id.
	touches tool.Touches
}

// Register adds the desktop tools, the backend's capabilities and its release hook to reg.
// With a nil backend the tools are still registered, and every call is refused with
// unsupported and the reason from opts.Unavailable, so a worker without a display starts.
func Register(reg *tool.Registry, b *x11.Backend, opts Options) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &desk{b: b, log: logger, ax: opts.Accessibility, sessions: newSessionStore(), seats: newSeatStore(), cursors: newCursorStore(), foreground: newForegroundGate(), creds: opts.Credentials}
	if opts.NoSessionDevices {
		d.seats.unusable = fmt.Errorf("%w: session input devices are turned off", x11.ErrUnsupported)
	}
	if b != nil && d.ax == nil {
		d.ax = atspi.New(atspi.Options{Logger: logger, Done: b.Done()})
	}
	for _, c := range Probe(b, opts.Unavailable) {
		reg.AddCapability(c)
	}
	reg.AddCapability(a11yCapability(d.ax))
	if b != nil {
		reg.OnRelease(b.ReleaseAll)
	}
	for _, s := range d.specs() {
		h := d.foreground.observed(s.handler)
		if b == nil {
			h = unavailable(opts.Unavailable)
		}
		touches := s.touches
		touches.Window = takesWindow(s.schema)
		reg.Register(tool.Tool{Name: s.name, Description: s.description, InputSchema: s.schema, OutputSchema: tool.OutputSchema(s.name),
			Annotations: tool.InventoryAnnotations(s.name), Touches: touches, Args: s.args, Handler: h})
	}
}

// Probe reports the backend's capabilities: x11, xtest, mit-shm, xres and the EWMH window
// manager. With a nil backend everything is unavailable and x11's detail says why.
func Probe(b *x11.Backend, unavailable error) []tool.Capability {
	if b == nil {
		why := "no display"
		if unavailable != nil {
			why = unavailable.Error()
		}
		return []tool.Capability{
			{Name: "x11", Available: false, Detail: why},
			{Name: "xtest", Available: false}, {Name: "mit-shm", Available: false},
			{Name: "xres", Available: false}, {Name: "window_manager", Available: false},
		}
	}
	c := b.Capabilities()
	shmDetail := ""
	if used, reason := b.SHMStatus(); !used && reason != "" {
		shmDetail = reason
	}
	wm := tool.Capability{Name: "window_manager", Available: c.WindowManager != "", Detail: c.WindowManager}
	if c.WindowManager == "" {
		wm.Detail = "no EWMH window manager: windows come from QueryTree, activation uses SetInputFocus"
	}
	return []tool.Capability{
		{Name: "x11", Available: true, Detail: b.Display()},
		{Name: "xtest", Available: c.XTest, Detail: c.XTestVersion},
		{Name: "mit-shm", Available: c.SHM, Detail: shmDetail},
		{Name: "xres", Available: c.XRes},
		wm,
	}
}

func unavailable(why error) tool.Handler {
	msg := "no X display is available"
	if why != nil {
		msg = fmt.Sprintf("no X display is available: %v", why)
	}
	return func(context.Context, *tool.Call) (*tool.Result, error) {
		return nil, authz.Refuse(authz.CodeUnsupported, "%s", msg)
	}
}

// Annotations is tool.InventoryAnnotations: the MCP annotations the shipped inventory gives
// the tool name.
func Annotations(name string) tool.Annotations { return tool.InventoryAnnotations(name) }

// takesWindow reports whether a tool's input schema takes both pid and window_id: a call
// naming only the pid gets the decided window pinned (tool.Touches.Window).
func takesWindow(schema json.RawMessage) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Properties["pid"] != nil && s.Properties["window_id"] != nil
}

func (d *desk) specs() []spec {
	var all []spec
	for _, group := range [][]spec{d.observeSpecs(), d.a11ySpecs(), d.verifySpecs(), d.pointerSpecs(), d.keyboardSpecs(), d.menuSpecs(), d.appSpecs(), d.cursorSpecs(), d.secretSpecs()} {
		all = append(all, group...)
	}
	return all
}

// result builds a result with text and a structured object.
func result(text string, structured map[string]any) *tool.Result {
	return tool.TextResult(text, structured)
}
