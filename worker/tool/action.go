package tool

// The result vocabulary of the reference driver's tool contract (version 0.7.0). An
// action tool's structuredContent is exactly an Action: closed, so anything cua-host
// reports beyond it goes in Result.Details.

// Effect is what the tool could verify about its action.
type Effect string

// Effects.
const (
	// EffectConfirmed: the tool read back the change it made (a value, a window, the
	// pointer where it should be).
	EffectConfirmed Effect = "confirmed"
	// EffectPartial: some of the action was delivered and confirmed, not all.
	EffectPartial Effect = "partial"
	// EffectUnverifiable: delivered, and nothing the tool can read shows whether it took.
	EffectUnverifiable Effect = "unverifiable"
	// EffectSuspectedNoop: delivered, and what the tool read back suggests nothing changed.
	EffectSuspectedNoop Effect = "suspected_noop"
	// EffectRefused: nothing was delivered (a refusal carries its own result shape; this
	// is for an action that declined part of itself).
	EffectRefused Effect = "refused"
)

// Route is how the input reached the target.
type Route string

// Routes.
const (
	// RouteAccessibility: an AT-SPI action, value or text interface.
	RouteAccessibility Route = "accessibility"
	// RouteSyntheticEvents: events sent to one window only (XSendEvent).
	RouteSyntheticEvents Route = "synthetic_events"
	// RouteGlobalInput: input through the server's input path (XTEST on the core devices
	// or on the session's own XInput2 devices).
	RouteGlobalInput Route = "global_input"
	// RouteSystemAPI: a window-manager or server request (move, resize, raise).
	RouteSystemAPI Route = "system_api"
)

// DeliveryMode is whether the action took the person's pointer or focus.
type DeliveryMode string

// Delivery modes.
const (
	DeliveryBackground    DeliveryMode = "background"
	DeliveryForeground    DeliveryMode = "foreground"
	DeliveryNotApplicable DeliveryMode = "not_applicable"
	DeliveryUnknown       DeliveryMode = "unknown"
)

// EvidenceKind names what a confirmation rests on.
type EvidenceKind string

// Evidence kinds.
const (
	// EvidenceValueReadback: a value or text read back from the target.
	EvidenceValueReadback EvidenceKind = "value_readback"
	// EvidenceWindowChange: a window's geometry, stacking or existence read back.
	EvidenceWindowChange EvidenceKind = "window_change"
)

// Action is an action tool's structured result in the contract's shape.
type Action struct {
	Effect     Effect      `json:"effect"`
	Route      Route       `json:"route"`
	Delivery   *Delivery   `json:"delivery,omitempty"`
	Evidence   []Evidence  `json:"evidence,omitempty"`
	Escalation *Escalation `json:"escalation,omitempty"`
}

// Delivery says how the input was delivered and how many events (keys, clicks, steps)
// reached the target.
type Delivery struct {
	Mode           DeliveryMode `json:"mode"`
	DeliveredCount *int         `json:"delivered_count,omitempty"`
}

// Evidence is one kind of read-back a confirmation rests on.
type Evidence struct {
	Kind EvidenceKind `json:"kind"`
}

// Escalation suggests what the caller could do when the effect is not confirmed.
type Escalation struct {
	// Target is one of pixel, foreground, page, session.
	Target string `json:"target"`
	// Reason is one of route_unavailable, delivery_failed, effect_unconfirmed,
	// suspected_noop, permission_required.
	Reason string `json:"reason"`
}

// Delivered returns a Delivery of n events in mode m.
func Delivered(m DeliveryMode, n int) *Delivery { return &Delivery{Mode: m, DeliveredCount: &n} }

// ActionResult returns a result whose structured value is a (the contract's shape) and
// whose details are cua-host's own account of the action (nil for none).
func ActionResult(text string, a Action, details map[string]any) *Result {
	r := &Result{Content: []Content{Text(text)}, Structured: a}
	if len(details) > 0 {
		r.Details = details
	}
	return r
}

// ActionSchema is the JSON Schema of Action, the output schema the action tools declare
// in tools/list (OutputSchema): it accepts every successful action result, and only those.
// Over MCP it is advertised beside the refusal and error shapes, which every tool can
// return too.
var ActionSchema = []byte(actionSchema)

// actionSchema is ActionSchema's text.
const actionSchema = `{"type":"object","additionalProperties":false,"required":["effect","route"],"properties":{` +
	`"effect":{"type":"string","enum":["confirmed","partial","unverifiable","suspected_noop","refused"]},` +
	`"route":{"type":"string","enum":["accessibility","synthetic_events","global_input","system_api","dom","trusted_input"]},` +
	`"delivery":{"type":["object","null"],"additionalProperties":false,"required":["mode"],"properties":{` +
	`"mode":{"type":"string","enum":["background","foreground","not_applicable","unknown"]},` +
	`"delivered_count":{"type":["integer","null"],"minimum":0}}},` +
	`"evidence":{"type":["array","null"],"items":{"type":"object","additionalProperties":false,"required":["kind"],"properties":{"kind":{"type":"string","enum":["value_readback","window_change"]}}}},` +
	`"escalation":{"type":["object","null"],"additionalProperties":false,"required":["target","reason"],"properties":{` +
	`"target":{"type":"string","enum":["pixel","foreground","page","session"]},` +
	`"reason":{"type":"string","enum":["route_unavailable","delivery_failed","effect_unconfirmed","suspected_noop","permission_required"]}}}}}`
