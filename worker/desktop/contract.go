package desktop

import (
	"maps"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// An action tool's structured result is the contract's closed shape (tool.Action); what
// cua-host knows beyond it (the route by name, the pointer read back, the devices) goes in
// the result's details, under the names the tools used before the contract shape:
// "route", "delivery", "verified", "evidence" and the tool's own fields.

// deviceResult reports pointer input delivered through dl's devices (XTEST on the core
// devices or on the session's pair: the contract's global_input route). effect is what the
// tool can say of the action's effect; delivered counts the events that reached the server
// (clicks, notches); verified is whether the pointer was read back where the input had to
// land. When the pointer itself was not where the input was sent (evidence
// "pointer_landed" false, or unreadable), background input suggests a foreground retry; a
// different window under a pointer that landed (a menu the click opened) does not.
func deviceResult(dl *delivery, text string, effect tool.Effect, delivered int, verified bool, evidence, extra map[string]any) *tool.Result {
	a := inputAction(dl, effect, delivered)
	if landed, _ := evidence["pointer_landed"].(bool); !verified && !landed && effect != tool.EffectConfirmed && dl.mode == deliveryBackground {
		a.Escalation = &tool.Escalation{Target: "foreground", Reason: "effect_unconfirmed"}
	}
	return tool.ActionResult(text, a, inputDetails(dl, verified, evidence, extra))
}

// keyResult reports keyboard input delivered through dl's devices: nothing reads back what
// keys did, so its effect is unverifiable.
func keyResult(dl *delivery, text string, delivered int, evidence, extra map[string]any) *tool.Result {
	return tool.ActionResult(text, inputAction(dl, inputEffect, delivered), inputDetails(dl, false, evidence, extra))
}

func inputAction(dl *delivery, effect tool.Effect, delivered int) tool.Action {
	a := tool.Action{Effect: effect, Route: tool.RouteGlobalInput, Delivery: tool.Delivered(tool.DeliveryMode(dl.mode), delivered)}
	if effect == tool.EffectConfirmed {
		a.Evidence = []tool.Evidence{{Kind: tool.EvidenceValueReadback}}
	}
	return a
}

func inputDetails(dl *delivery, verified bool, evidence, extra map[string]any) map[string]any {
	details := map[string]any{"route": dl.route, "delivery": dl.mode, "verified": verified, "evidence": evidence}
	maps.Copy(details, extra)
	return details
}

// inputEffect is the effect of pointer or keyboard input whose consequences the tool cannot
// read back: unverifiable, whether or not the pointer was where it should be (a pointer
// that was not is reported by the escalation).
const inputEffect = tool.EffectUnverifiable

// a11yAction is the contract shape of an accessibility operation's outcome. Text, value
// and selection are read back after they are set, so a verified one is confirmed and an
// unverified one a suspected no-op; an action (press, activate) reports only that the
// toolkit accepted it, which says nothing about its effect.
func a11yAction(out atspi.Outcome) tool.Action {
	a := tool.Action{Route: tool.RouteAccessibility, Delivery: tool.Delivered(tool.DeliveryBackground, 1)}
	switch {
	case out.Route == atspi.RouteAction || out.Route == atspi.RouteScrollTo:
		a.Effect = tool.EffectUnverifiable
	case out.Verified:
		a.Effect = tool.EffectConfirmed
		a.Evidence = []tool.Evidence{{Kind: tool.EvidenceValueReadback}}
	default:
		a.Effect = tool.EffectSuspectedNoop
		a.Escalation = &tool.Escalation{Target: "pixel", Reason: "suspected_noop"}
	}
	return a
}
