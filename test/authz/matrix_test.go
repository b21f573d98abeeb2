package authze2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/policy"
)

// matrixPolicy allows every exposed tool and the test-only ones except double_click, which
// the user layer denies: click is the "policy allows" column, double_click "policy denies".
func matrixPolicy(t testing.TB) *policy.Set {
	t.Helper()
	var allow []string
	for _, e := range authz.DefaultInventory().Entries() {
		if e.Exposed() && e.Tool != "double_click" {
			allow = append(allow, e.Tool)
		}
	}
	allow = append(allow, "noop", "marker", "sleep")
	path := filepath.Join(t.TempDir(), "user.yaml")
	src := fmt.Sprintf("allow: {tools: [%s]}\ndeny: {tools: [double_click]}\n", strings.Join(allow, ", "))
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadLayers("", path)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// xevlogArgPatterns are the arguments launchApp gives xevlog, as a manifest's arguments.
const xevlogArgPatterns = `'-(title|width|height|out|color)', '[0-9]+', '[0-9a-f]{6}', '[a-z][a-z-]*', '/[A-Za-z0-9_./-]+\.jsonl'`

// boundedManifest lists exe (launchable with launchApp's arguments) as the only app,
// allows tools and denies deny.
func boundedManifest(exe string, tools, deny []string) []byte {
	m := fmt.Sprintf("version: 1\nexpires_after: 1h\nidle_timeout: 30m\nallow: {tools: [%s]}\n", strings.Join(tools, ", "))
	if len(deny) > 0 {
		m += fmt.Sprintf("deny: {tools: [%s]}\n", strings.Join(deny, ", "))
	}
	m += fmt.Sprintf("resources:\n  apps: [{executable: %s, launch: true, terminate: driver_launched, arguments: [%s]}]\n", exe, xevlogArgPatterns)
	return []byte(m)
}

// grantByLabel is the embedding host's consent provider: it grants sessions labelled
// "grant…" for a minute and declines everyone else. It records what it was asked.
type grantByLabel struct {
	asked []host.ConsentRequest
}

func (g *grantByLabel) decide(ctx context.Context, req host.ConsentRequest) host.ConsentDecision {
	g.asked = append(g.asked, req)
	if strings.HasPrefix(req.Session, "grant") {
		return host.ConsentDecision{Granted: true, TTL: 60e9}
	}
	return host.ConsentDecision{}
}

// TestMatrix drives mode × resource ownership × policy verdict × manifest entry through a
// real worker on Xvfb. Every cell checks the decision, the refusal code and the outcome,
// and through xevlog that a refused call delivered no input (a barrier click by the user
// must be the only new button press) and that an allowed one did.
func TestMatrix(t *testing.T) {
	requireDesktop(t)
	protected := startApp(t, appB, "protected")
	place(t, protected, 0, 0)
	foreign := startApp(t, appB, "foreign")
	place(t, foreign, 330, 0)
	g := &grantByLabel{}
	h := startHost(t, host.Options{Policy: matrixPolicy(t), Consent: g.decide, ProtectedPIDs: []int{protected.PID}})

	type mode struct {
		label    string
		mode     authz.Mode
		manifest []byte
		// want is the code for click on: own, foreign; protected is always self_target_denied
		// and double_click always permission_denied.
		want [2]authz.Code
	}
	launch := []string{"launch_app"}
	modes := []mode{
		{"grant-standard", authz.Standard, nil, [2]authz.Code{"", ""}},
		{"decline-standard", authz.Standard, nil, [2]authz.Code{"", authz.CodeAuthorizationDeclined}},
		{"bounded-listed", authz.Bounded, boundedManifest(appA, append(launch, "click", "double_click"), nil), [2]authz.Code{"", authz.CodeOutsideManifest}},
		{"bounded-unlisted-tool", authz.Bounded, boundedManifest(appA, append(launch, "double_click"), nil), [2]authz.Code{authz.CodeOutsideManifest, authz.CodeOutsideManifest}},
		{"bounded-denied-tool", authz.Bounded, boundedManifest(appA, append(launch, "double_click"), []string{"click"}), [2]authz.Code{authz.CodeManifestDenied, authz.CodeManifestDenied}},
		{"unrestricted", authz.Unrestricted, nil, [2]authz.Code{"", ""}},
	}
	sessions := map[string]*host.Session{}
	owns := map[string]*app{}
	for i, m := range modes {
		s := session(t, h, host.SessionSpec{Label: m.label, Mode: m.mode, Manifest: m.manifest})
		sessions[m.label] = s
		own := launchApp(t, s, appA, "own-"+m.label)
		place(t, own, 330*(i%4), 230*(1+i/4))
		owns[m.label] = own
	}
	// Launching an executable the manifest does not list is refused, and starts nothing.
	res := call(t, sessions["bounded-listed"], "launch_app", map[string]any{"launch_path": appB})
	check(t, "bounded launch of an unlisted executable", res, authz.CodeOutsideManifest)

	barrier := sessions["unrestricted"]
	for _, m := range modes {
		s := sessions[m.label]
		targets := []struct {
			owner string
			a     *app
			click authz.Code
		}{
			{"own", owns[m.label], m.want[0]},
			{"foreign", foreign, m.want[1]},
			{"protected", protected, authz.CodeSelfTargetDenied},
		}
		for _, tg := range targets {
			for _, verdict := range []string{"policy-allow", "policy-deny"} {
				name := fmt.Sprintf("%s/%s/%s", m.label, tg.owner, verdict)
				t.Run(name, func(t *testing.T) {
					tool, want := "click", tg.click
					if verdict == "policy-deny" {
						tool = "double_click"
						if want != authz.CodeSelfTargetDenied { // the hard invariant comes first
							want = authz.CodePermissionDenied
						}
					}
					before := tg.a.count(t, "button_press")
					res := call(t, s, tool, map[string]any{"pid": tg.a.PID, "window_id": tg.a.Window, "x": 150, "y": 100})
					check(t, name, res, want)
					if want == "" {
						tg.a.waitCount(t, "button_press", before+1)
						return
					}
					// Refused: the next press the window sees is the barrier's.
					if tg.owner == "protected" {
						userClick(t, tg.a)
					} else {
						check(t, "barrier", call(t, barrier, "click", map[string]any{"pid": tg.a.PID, "window_id": tg.a.Window, "x": 150, "y": 100}), "")
					}
					tg.a.waitCount(t, "button_press", before+1)
					if n := tg.a.count(t, "button_press"); n != before+1 {
						t.Errorf("window saw %d presses after a refused %s, want only the barrier's", n-before, tool)
					}
				})
			}
		}
	}
	// The provider was asked only by standard sessions, about exactly the foreign window.
	for _, req := range g.asked {
		if !strings.HasSuffix(req.Session, "-standard") || req.Operation != "input" ||
			req.Resource != fmt.Sprintf("window:pid=%d,id=0x%x", foreign.PID, foreign.Window) {
			t.Errorf("unexpected consent request %+v", req)
		}
	}
}

// TestNoConsentProvider: a standard session without a provider is refused with
// authorization_required for a window it did not launch, and nothing happens.
func TestNoConsentProvider(t *testing.T) {
	requireDesktop(t)
	foreign := startApp(t, appB, "foreign-noprovider")
	place(t, foreign, 660, 460)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "std"})
	before := foreign.count(t, "button_press")
	check(t, "click", call(t, s, "click", map[string]any{"pid": foreign.PID, "window_id": foreign.Window, "x": 10, "y": 10}), authz.CodeAuthorizationRequired)
	check(t, "type_text", call(t, s, "type_text", map[string]any{"pid": foreign.PID, "window_id": foreign.Window, "text": "x"}), authz.CodeAuthorizationRequired)
	userClick(t, foreign)
	foreign.waitCount(t, "button_press", before+1)
	if n := foreign.count(t, "button_press"); n != before+1 {
		t.Errorf("%d presses, want only the user's", n-before)
	}
	if n := foreign.count(t, "key_press"); n != 0 {
		t.Errorf("%d key presses reached a window without consent", n)
	}
}
