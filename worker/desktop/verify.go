package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// verify_state bounds and defaults.
const (
	// MaxPredicates is the most predicates one verify_state call checks.
	MaxPredicates = 8
	// MaxVerifyTimeoutMS is the longest verify_state wait.
	MaxVerifyTimeoutMS = 10000
	// DefaultVerifyTimeoutMS is the wait when timeout_ms is not given.
	DefaultVerifyTimeoutMS = 5000
	// MaxStableSamples is the most consecutive satisfied samples that may be asked for.
	MaxStableSamples = 5
	// DefaultStableSamples is stable_samples when not given (1 when timeout_ms is 0).
	DefaultStableSamples = 2
	// VerifyInterval is the pause between two samples.
	VerifyInterval = 100 * time.Millisecond
	// maxTolerancePx bounds a bounds predicate's tolerance.
	maxTolerancePx = 100
	// verifyWalkFloor is the least time a sample's accessibility walk gets, even when the
	// wait is over: the last sample is taken at the deadline.
	verifyWalkFloor = 300 * time.Millisecond
	// verifyMaxElements bounds the elements of a sample's walk.
	verifyMaxElements = 1000
)

// Predicate and overall statuses, and the reasons a predicate is unknown (the reference
// contract's vocabulary).
const (
	statusSatisfied   = "satisfied"
	statusUnsatisfied = "unsatisfied"
	statusUnknown     = "unknown"

	unknownInvalid           = "invalid_predicate"
	unknownMultiMatch        = "multi_match"
	unknownTargetMissing     = "target_missing"
	unknownObservation       = "observation_unavailable"
	unknownStabilityUnproven = "stability_unproven"
)

func (d *desk) verifySpecs() []spec {
	bounds := prop{"type": []string{"object", "null"}, "additionalProperties": false,
		"description": "The window's client area in desktop coordinates (as list_windows' frame and set_window_frame), each within tolerance_px.",
		"required":    []string{"x", "y", "width", "height"},
		"properties": map[string]prop{
			"x": {"type": "number"}, "y": {"type": "number"}, "width": {"type": "number"}, "height": {"type": "number"},
			"tolerance_px": {"type": "number", "minimum": 0, "maximum": maxTolerancePx, "description": "Allowed difference per value (default 0)."},
		}}
	window := prop{"type": []string{"object", "null"}, "additionalProperties": false,
		"description": "A predicate on the window itself: exists, bounds, or both.",
		"properties": map[string]prop{
			"exists": {"type": []string{"boolean", "null"}, "description": "The window is (true) or is no longer (false) a window of pid."},
			"bounds": bounds,
		}}
	element := prop{"type": []string{"object", "null"}, "additionalProperties": false,
		"description": "A predicate on the window's accessible elements that match selector (role exactly, ignoring case; label_contains in the accessible name, case-sensitive). Only elements on screen are seen, so absence is never proven: no match is unknown (target_missing), not unsatisfied.",
		"required":    []string{"selector"},
		"properties": map[string]prop{
			"selector": {"type": "object", "additionalProperties": false, "properties": map[string]prop{
				"role":           {"type": "string", "minLength": 1, "description": `AT-SPI role as get_window_state shows it ("push button", "text", "check box").`},
				"label_contains": {"type": "string", "minLength": 1, "description": "Text the accessible name contains."},
			}},
			"exists":       {"type": "boolean", "enum": []bool{true}, "description": "At least one element matches. Only true: absence cannot be proven."},
			"enabled":      {"type": []string{"boolean", "null"}, "description": "The one matching element is enabled (sensitive) or not."},
			"selected":     {"type": []string{"boolean", "null"}, "description": "The one matching element is selected or checked (rows, tabs, check boxes, radio and toggle buttons), or not."},
			"value_equals": {"type": []string{"string", "null"}, "description": "The one matching element's value (an entry's text, a slider's number) equals this."},
		}}
	props := map[string]prop{
		"pid": pidProp, "window_id": windowProp,
		"expect": {"type": "array", "minItems": 1, "maxItems": MaxPredicates,
			"description": "One to eight predicates, combined with logical AND. Each names window or element.",
			"items": prop{"type": "object", "additionalProperties": false,
				"properties": map[string]prop{"window": window, "element": element}}},
		"timeout_ms": intProp(fmt.Sprintf("Bounded wait (default %d). 0 takes one sample (and makes stable_samples default to 1).", DefaultVerifyTimeoutMS), 0, MaxVerifyTimeoutMS),
		"stable_samples": intProp(fmt.Sprintf("Consecutive satisfied samples, %d ms apart, required before success (default %d).",
			VerifyInterval.Milliseconds(), DefaultStableSamples), 1, MaxStableSamples),
		"include_screenshot": prop{"type": []string{"boolean", "null"}, "description": "Also return the window's screenshot at the end, uninterpreted."},
	}
	return []spec{
		{name: "verify_state", description: "Verify predicates on one window (pid + window_id): that it exists or is gone, its frame within a tolerance, and accessible elements that exist, are enabled, selected or hold a value. " +
			"Samples every 100 ms until every predicate holds for stable_samples samples in a row or timeout_ms passes. A verification that does not hold is a successful call with status unsatisfied or unknown (each predicate says which and why), never an error. Reads only.",
			schema: schema([]string{"pid", "window_id", "expect"}, props), handler: d.verifyState, args: tool.NewArgs[verifyArgs]},
	}
}

// verifyArgs are verify_state's arguments. expect is parsed by hand (parsePredicates) so
// that every key is checked exactly and every refusal names its place.
type verifyArgs struct {
	PID               *int    `json:"pid"`
	WindowID          *uint32 `json:"window_id"`
	Expect            []any   `json:"expect"`
	TimeoutMS         *int    `json:"timeout_ms"`
	StableSamples     *int    `json:"stable_samples"`
	IncludeScreenshot *bool   `json:"include_screenshot"`
	Session           string  `json:"session"`
}

// predicate is one parsed item of expect.
type predicate struct {
	// invalid, when set, says why the item asserts nothing checkable: it is reported
	// unknown (invalid_predicate) and the conjunction cannot hold.
	invalid string
	window  *windowPredicate
	element *elementPredicate
}

type windowPredicate struct {
	exists *bool
	bounds *boundsPredicate
}

type boundsPredicate struct {
	x, y, width, height, tolerance float64
}

type elementPredicate struct {
	role, label string
	enabled     *bool
	selected    *bool
	value       *string
}

// verifySettings are the validated numbers of a call.
type verifySettings struct {
	timeout time.Duration
	stable  int
}

func (a verifyArgs) settings() (verifySettings, error) {
	s := verifySettings{timeout: DefaultVerifyTimeoutMS * time.Millisecond, stable: DefaultStableSamples}
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 0 || *a.TimeoutMS > MaxVerifyTimeoutMS {
			return s, invalid("timeout_ms %d: want 0–%d", *a.TimeoutMS, MaxVerifyTimeoutMS)
		}
		s.timeout = time.Duration(*a.TimeoutMS) * time.Millisecond
		if *a.TimeoutMS == 0 {
			s.stable = 1
		}
	}
	if a.StableSamples != nil {
		if *a.StableSamples < 1 || *a.StableSamples > MaxStableSamples {
			return s, invalid("stable_samples %d: want 1–%d", *a.StableSamples, MaxStableSamples)
		}
		s.stable = *a.StableSamples
	}
	return s, nil
}

// parsePredicates checks expect against the schema (exact keys, types, ranges) and
// returns the predicates. Items that are well-formed but assert nothing checkable (no
// window and no element, both, a window predicate without exists or bounds, an empty
// selector) are kept, marked invalid: they are reported, not refused.
func parsePredicates(expect []any) ([]predicate, error) {
	if expect == nil {
		return nil, invalid("expect is required: one to %d predicates", MaxPredicates)
	}
	if len(expect) == 0 || len(expect) > MaxPredicates {
		return nil, invalid("expect has %d predicates: want 1–%d", len(expect), MaxPredicates)
	}
	out := make([]predicate, len(expect))
	for i, item := range expect {
		at := fmt.Sprintf("expect[%d]", i)
		obj, err := object(at, item, false, "window", "element")
		if err != nil {
			return nil, err
		}
		var p predicate
		if p.window, err = parseWindow(at+".window", obj["window"]); err != nil {
			return nil, err
		}
		if p.element, err = parseElement(at+".element", obj["element"]); err != nil {
			return nil, err
		}
		switch {
		case p.window == nil && p.element == nil:
			p.invalid = "names neither window nor element"
		case p.window != nil && p.element != nil:
			p.invalid = "names both window and element; use one predicate for each"
		case p.window != nil && p.window.exists == nil && p.window.bounds == nil:
			p.invalid = "window asserts neither exists nor bounds"
		case p.element != nil && p.element.role == "" && p.element.label == "":
			p.invalid = "element selector names neither role nor label_contains"
		}
		out[i] = p
	}
	return out, nil
}

// object checks that v is a JSON object (or null, when nullable) with only the given
// keys. A nil map with no error is null.
func object(at string, v any, nullable bool, keys ...string) (map[string]any, error) {
	if v == nil && nullable {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("%s must be an object, not %s", at, jsonKind(v))
	}
	var unknown []string
	for k := range obj {
		if !contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid("%s: unknown key %q (allowed: %s)", at, unknown[0], strings.Join(keys, ", "))
	}
	return obj, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsonKind names the JSON type of a decoded value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// optBool reads a boolean that may be null or absent.
func optBool(at string, v any, present bool) (*bool, error) {
	if !present || v == nil {
		return nil, nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil, invalid("%s must be a boolean or null, not %s", at, jsonKind(v))
	}
	return &b, nil
}

func parseWindow(at string, v any) (*windowPredicate, error) {
	obj, err := object(at, v, true, "exists", "bounds")
	if obj == nil || err != nil {
		return nil, err
	}
	w := &windowPredicate{}
	ev, ok := obj["exists"]
	if w.exists, err = optBool(at+".exists", ev, ok); err != nil {
		return nil, err
	}
	b, err := object(at+".bounds", obj["bounds"], true, "x", "y", "width", "height", "tolerance_px")
	if b == nil || err != nil {
		return w, err
	}
	bp := &boundsPredicate{}
	for _, f := range []struct {
		key string
		dst *float64
	}{{"x", &bp.x}, {"y", &bp.y}, {"width", &bp.width}, {"height", &bp.height}, {"tolerance_px", &bp.tolerance}} {
		raw, ok := b[f.key]
		if !ok && f.key == "tolerance_px" {
			continue
		}
		if !ok {
			return nil, invalid("%s.bounds.%s is required (x, y, width and height)", at, f.key)
		}
		n, isNum := raw.(float64)
		if !isNum {
			return nil, invalid("%s.bounds.%s must be a number, not %s", at, f.key, jsonKind(raw))
		}
		*f.dst = n
	}
	if bp.tolerance < 0 || bp.tolerance > maxTolerancePx {
		return nil, invalid("%s.bounds.tolerance_px %v: want 0–%d", at, bp.tolerance, maxTolerancePx)
	}
	w.bounds = bp
	return w, nil
}

func parseElement(at string, v any) (*elementPredicate, error) {
	obj, err := object(at, v, true, "selector", "exists", "enabled", "selected", "value_equals")
	if obj == nil || err != nil {
		return nil, err
	}
	sv, ok := obj["selector"]
	if !ok {
		return nil, invalid("%s.selector is required", at)
	}
	sel, err := object(at+".selector", sv, false, "role", "label_contains")
	if err != nil {
		return nil, err
	}
	e := &elementPredicate{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"role", &e.role}, {"label_contains", &e.label}} {
		raw, ok := sel[f.key]
		if !ok {
			continue
		}
		s, isStr := raw.(string)
		if !isStr || s == "" {
			return nil, invalid("%s.selector.%s must be a non-empty string, not %s", at, f.key, jsonKind(raw))
		}
		*f.dst = s
	}
	if ex, ok := obj["exists"]; ok && ex != true {
		if ex == false {
			return nil, invalid("%s.exists: false is not accepted: element walks do not see every element (off-screen and hidden ones are left out), so absence cannot be proven; use window.exists false for a window that should be gone", at)
		}
		return nil, invalid("%s.exists must be true, not %s", at, jsonKind(ex))
	}
	ev, ok := obj["enabled"]
	if e.enabled, err = optBool(at+".enabled", ev, ok); err != nil {
		return nil, err
	}
	sv2, ok := obj["selected"]
	if e.selected, err = optBool(at+".selected", sv2, ok); err != nil {
		return nil, err
	}
	if raw, ok := obj["value_equals"]; ok && raw != nil {
		s, isStr := raw.(string)
		if !isStr {
			return nil, invalid("%s.value_equals must be a string or null, not %s", at, jsonKind(raw))
		}
		e.value = &s
	}
	return e, nil
}

// predicateResult is one predicate's entry in the result, in the contract's shape.
type predicateResult struct {
	Index         int     `json:"index"`
	Status        string  `json:"status"`
	UnknownReason *string `json:"unknown_reason"`
	ObservedJSON  *string `json:"observed_json"`
}

// verifyResult is verify_state's structured result, in the contract's shape.
type verifyResult struct {
	Status     string            `json:"status"`
	Stable     bool              `json:"stable"`
	Samples    int               `json:"samples"`
	ElapsedMS  int64             `json:"elapsed_ms"`
	Predicates []predicateResult `json:"predicates"`
}

// sampleFacts is what one sample read, for the details.
type sampleFacts struct {
	windowGone bool
	walked     bool
	truncated  bool
	degraded   string
}

func (d *desk) verifyState(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[verifyArgs](call)
	if err != nil {
		return nil, err
	}
	if a.PID == nil || a.WindowID == nil {
		return nil, invalid("pid and window_id are required (from list_windows)")
	}
	set, err := a.settings()
	if err != nil {
		return nil, err
	}
	preds, err := parsePredicates(a.Expect)
	if err != nil {
		return nil, err
	}
	win, err := resolveMinimized(ctx, d.b, call.Window, targetArgs{PID: a.PID, WindowID: a.WindowID})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := start.Add(set.timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-verifyWalkFloor).Before(deadline) {
		deadline = dl.Add(-verifyWalkFloor)
	}
	permanent := false // a predicate that can never hold: one sample says all there is
	for _, p := range preds {
		permanent = permanent || p.invalid != ""
	}
	var (
		results []predicateResult
		facts   sampleFacts
		samples int
		streak  int
		timer   = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	for {
		results, facts = d.sample(ctx, win, preds, deadline)
		samples++
		if allSatisfied(results) {
			streak++
		} else {
			streak = 0
		}
		if streak >= set.stable || permanent {
			break
		}
		now := time.Now()
		if !now.Before(deadline) {
			break
		}
		timer.Reset(min(VerifyInterval, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			return nil, refusal(ctx.Err())
		case <-timer.C:
		}
	}
	res := verifyResult{Stable: streak >= set.stable, Samples: samples, ElapsedMS: time.Since(start).Milliseconds(), Predicates: results}
	switch {
	case res.Stable:
		res.Status = statusSatisfied
	case streak > 0: // it holds now, but not for long enough
		res.Status = statusUnknown
		for i := range res.Predicates {
			res.Predicates[i].Status = statusUnknown
			res.Predicates[i].UnknownReason = strPtr(unknownStabilityUnproven)
		}
	case anyStatus(results, statusUnsatisfied):
		res.Status = statusUnsatisfied
	default:
		res.Status = statusUnknown
	}
	details := map[string]any{
		"pid": win.PID, "window_id": win.ID, "timeout_ms": set.timeout.Milliseconds(), "stable_samples": set.stable,
		"satisfied_streak": streak, "interval_ms": VerifyInterval.Milliseconds(), "window_gone": facts.windowGone,
	}
	if facts.walked {
		details["elements_truncated"] = facts.truncated
	}
	if facts.degraded != "" {
		details["accessibility_degraded"] = facts.degraded
	}
	out := &tool.Result{Content: []tool.Content{tool.Text(verifyText(res, set))}, Structured: res, Details: details}
	if a.IncludeScreenshot != nil && *a.IncludeScreenshot {
		d.verifyScreenshot(ctx, call, win, facts.windowGone, out, details)
	}
	return out, nil
}

// verifyScreenshot adds the window's capture to out, or says in details why there is none.
func (d *desk) verifyScreenshot(ctx context.Context, call *tool.Call, win *x11.Window, gone bool, out *tool.Result, details map[string]any) {
	if gone {
		details["screenshot_error"] = "the window no longer exists"
		return
	}
	img, err := d.b.Capture(ctx, x11.CaptureOptions{Window: win.ID, MayShow: d.mayShow(call, win)})
	if err != nil {
		details["screenshot_error"] = err.Error()
		return
	}
	details["screenshot_width"], details["screenshot_height"], details["screenshot_scale"] = img.Width, img.Height, img.Scale
	if m := maskedInfo(img); m != nil {
		details["screenshot_masked"] = m
	}
	out.Content = append(out.Content, tool.Image(img.Data, img.MIMEType))
}

func verifyText(res verifyResult, set verifySettings) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (stable %v: %d samples in %d ms, %d in a row required)\n", res.Status, res.Stable, res.Samples, res.ElapsedMS, set.stable)
	for _, p := range res.Predicates {
		fmt.Fprintf(&sb, "- [%d] %s", p.Index, p.Status)
		if p.UnknownReason != nil {
			fmt.Fprintf(&sb, " (%s)", *p.UnknownReason)
		}
		if p.ObservedJSON != nil {
			fmt.Fprintf(&sb, " observed %s", *p.ObservedJSON)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func allSatisfied(rs []predicateResult) bool {
	for _, r := range rs {
		if r.Status != statusSatisfied {
			return false
		}
	}
	return len(rs) > 0
}

func anyStatus(rs []predicateResult, status string) bool {
	for _, r := range rs {
		if r.Status == status {
			return true
		}
	}
	return false
}

func strPtr(s string) *string { return &s }

// observed encodes v as the predicate's observed_json.
func observed(v any) *string {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return strPtr(string(b))
}

func known(index int, ok bool, obs any) predicateResult {
	st := statusUnsatisfied
	if ok {
		st = statusSatisfied
	}
	return predicateResult{Index: index, Status: st, ObservedJSON: observed(obs)}
}

func unknown(index int, reason string, obs any) predicateResult {
	r := predicateResult{Index: index, Status: statusUnknown, UnknownReason: strPtr(reason)}
	if obs != nil {
		r.ObservedJSON = observed(obs)
	}
	return r
}

// sample reads the window (and, when an element predicate needs it, its accessible tree)
// once and evaluates every predicate.
func (d *desk) sample(ctx context.Context, win *x11.Window, preds []predicate, deadline time.Time) ([]predicateResult, sampleFacts) {
	var facts sampleFacts
	cur, err := d.b.Window(ctx, win.ID)
	gone := errors.Is(err, x11.ErrWindowNotFound) || (err == nil && cur.PID != win.PID)
	facts.windowGone = gone
	var winErr error
	if err != nil && !gone {
		winErr = err
	}
	var snap *atspi.Snapshot
	var walkErr error
	needWalk := false
	for _, p := range preds {
		needWalk = needWalk || (p.invalid == "" && p.element != nil)
	}
	if needWalk && !gone && winErr == nil {
		budget := max(time.Until(deadline), verifyWalkFloor)
		opts := walkBudget(ctx, atspi.WalkOptions{MaxElements: verifyMaxElements, Timeout: min(budget, atspi.DefaultWalkTimeout)})
		snap, walkErr = d.ax.Snapshot(ctx, atspiWindow(&cur), opts)
		facts.walked = walkErr == nil
		if snap != nil {
			facts.truncated = snap.Truncated
			if snap.Degraded {
				facts.degraded = snap.DegradedReason
			}
		}
	}
	out := make([]predicateResult, len(preds))
	for i, p := range preds {
		switch {
		case p.invalid != "":
			out[i] = unknown(i, unknownInvalid, map[string]string{"invalid": p.invalid})
		case p.window != nil:
			out[i] = evalWindow(i, p.window, cur, gone, winErr)
		case gone:
			out[i] = unknown(i, unknownTargetMissing, map[string]any{"window_exists": false})
		case winErr != nil:
			out[i] = unknown(i, unknownObservation, map[string]string{"error": winErr.Error()})
		case walkErr != nil:
			out[i] = unknown(i, unknownObservation, map[string]string{"error": walkErr.Error()})
		case snap.Degraded:
			out[i] = unknown(i, unknownObservation, map[string]string{"degraded": snap.DegradedReason})
		default:
			out[i] = evalElement(i, p.element, snap)
		}
	}
	return out, facts
}

// evalWindow checks a window predicate: exists, then bounds.
func evalWindow(i int, p *windowPredicate, cur x11.Window, gone bool, err error) predicateResult {
	if err != nil {
		return unknown(i, unknownObservation, map[string]string{"error": err.Error()})
	}
	obs := map[string]any{"exists": !gone}
	if !gone {
		obs["bounds"] = map[string]int{"x": cur.Frame.X, "y": cur.Frame.Y, "width": cur.Frame.Width, "height": cur.Frame.Height}
	}
	ok := true
	if p.exists != nil && *p.exists == gone {
		ok = false
	}
	if p.bounds != nil {
		if gone {
			if !ok { // exists: true already fails
				return known(i, false, obs)
			}
			return unknown(i, unknownTargetMissing, obs)
		}
		b, f := p.bounds, cur.Frame
		within := func(got int, want float64) bool { return abs(float64(got)-want) <= b.tolerance }
		if !within(f.X, b.x) || !within(f.Y, b.y) || !within(f.Width, b.width) || !within(f.Height, b.height) {
			ok = false
		}
	}
	return known(i, ok, obs)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// elementObservation is what an element predicate saw.
type elementObservation struct {
	Matches   int     `json:"matches"`
	Role      string  `json:"role,omitempty"`
	Name      string  `json:"name,omitempty"`
	Enabled   *bool   `json:"enabled,omitempty"`
	Selected  *bool   `json:"selected,omitempty"`
	Value     *string `json:"value,omitempty"`
	Truncated bool    `json:"walk_truncated,omitempty"`
}

// evalElement checks an element predicate against a snapshot.
func evalElement(i int, p *elementPredicate, snap *atspi.Snapshot) predicateResult {
	var found []*atspi.Element
	for k := range snap.Elements {
		el := &snap.Elements[k]
		if p.role != "" && !strings.EqualFold(el.Role, strings.TrimSpace(p.role)) {
			continue
		}
		if p.label != "" && !strings.Contains(el.Name, p.label) {
			continue
		}
		found = append(found, el)
	}
	obs := elementObservation{Matches: len(found), Truncated: snap.Truncated}
	if len(found) == 0 {
		return unknown(i, unknownTargetMissing, obs)
	}
	el := found[0]
	st := el.StateSet()
	enabled, selected := st.Enabled(), st.Has(atspi.StateSelected) || st.Has(atspi.StateChecked)
	obs.Role, obs.Name, obs.Enabled, obs.Selected = el.Role, el.Name, &enabled, &selected
	obs.Value = el.Value
	asserts := p.enabled != nil || p.selected != nil || p.value != nil
	if !asserts {
		return known(i, true, obs)
	}
	if len(found) > 1 {
		return unknown(i, unknownMultiMatch, elementObservation{Matches: len(found), Truncated: snap.Truncated})
	}
	ok := true
	if p.enabled != nil && *p.enabled != enabled {
		ok = false
	}
	if p.selected != nil && *p.selected != selected {
		ok = false
	}
	if p.value != nil {
		switch {
		case el.Value == nil:
			if ok {
				return unknown(i, unknownObservation, obs) // no readable value (none, or a password)
			}
		case !atspi.ValueComplete(*el.Value):
			if ok {
				return unknown(i, unknownObservation, obs) // longer than a walk reads
			}
		case *el.Value != *p.value:
			ok = false
		}
	}
	return known(i, ok, obs)
}
