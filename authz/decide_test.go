package authz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/cua-host/cua-host/policy"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fataler is what the helpers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustYAMLPolicy(t fataler, src string) *policy.Set {
	t.Helper()
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: []byte(src)}})
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	return policy.NewSet(nil, l)
}

func mustManifest(t fataler, src string) *Manifest {
	t.Helper()
	m, err := ParseManifest([]byte(src), nil)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m
}

func TestPipelineDecide(t *testing.T) {
	pol := mustYAMLPolicy(t, "allow: {tools: [click, zoom, kill_app, get_desktop_state, clipboard_read, launch_app, get_screen_size]}\ndeny: {tools: [double_click]}\n")
	pipe := NewPipeline(pol, nil)
	man := mustManifest(t, "version: 1\nexpires_after: 1h\nidle_timeout: 10m\nallow: {tools: [click, double_click, get_screen_size, launch_app]}\ndeny: {tools: [zoom]}\nresources: {apps: [{executable: /usr/bin/xterm, launch: true}]}\n")
	std := &Authority{Mode: Standard}
	bnd := &Authority{Mode: Bounded, Manifest: man}
	unr := &Authority{Mode: Unrestricted}
	own := Resource{Kind: ResourceWindow, Op: OpInput, PID: 100, Window: 1, Executable: "/usr/bin/xterm", Owned: true}
	foreign := Resource{Kind: ResourceWindow, Op: OpInput, PID: 200, Window: 2, Executable: "/usr/bin/firefox"}
	foreignXterm := Resource{Kind: ResourceWindow, Op: OpInput, PID: 300, Window: 3, Executable: "/usr/bin/xterm"}
	display := Resource{Kind: ResourceDisplay, Op: OpObserve}
	var held Grants
	held.Add(Resource{Kind: ResourceWindow, Op: OpInput, PID: 200, Window: 2}.Key(), t0, t0.Add(time.Minute))
	shGrant := Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh", Argv: []string{"/usr/bin/sh", "-c", "id"}}
	held.Add(shGrant.Key(), t0, t0.Add(time.Minute))

	tests := []struct {
		name    string
		c       *Authority
		tool    string
		target  Target
		grants  *Grants
		want    Code // "" allowed
		consent bool
	}{
		{name: "self target beats everything", c: unr, tool: "click", target: Target{SelfPID: 1, Resource: own}, want: CodeSelfTargetDenied},
		{name: "protected UI", c: unr, tool: "click", target: Target{ProtectedUIPID: 2, Resource: own}, want: CodeProtectedUIDenied},
		{name: "policy deny in unrestricted", c: unr, tool: "double_click", target: Target{Resource: own}, want: CodePermissionDenied},
		{name: "policy deny before manifest", c: bnd, tool: "double_click", target: Target{Resource: own}, want: CodePermissionDenied},
		{name: "policy unlisted", c: std, tool: "type_text", target: Target{Resource: own}, want: CodePermissionDenied},
		{name: "unclassified after policy", c: unr, tool: "clik", target: Target{}, want: CodePermissionDenied},
		{name: "unresolved after classification", c: std, tool: "click", target: Target{Unresolved: Refuse(CodeWindowNotFound, "gone")}, want: CodeWindowNotFound},
		{name: "standard own window", c: std, tool: "click", target: Target{Resource: own}},
		{name: "standard foreign window needs consent", c: std, tool: "click", target: Target{Resource: foreign}, consent: true},
		{name: "standard foreign window with grant", c: std, tool: "click", target: Target{Resource: foreign}, grants: &held},
		{name: "standard grant is per operation", c: std, tool: "zoom", target: Target{Resource: Resource{Kind: ResourceWindow, Op: OpObserve, PID: 200, Window: 2}}, grants: &held, consent: true},
		{name: "standard display needs consent", c: std, tool: "get_desktop_state", target: Target{Resource: display}, consent: true},
		{name: "standard clipboard read needs consent", c: std, tool: "clipboard_read", target: Target{Resource: Resource{Kind: ResourceClipboard, Op: OpObserve}}, consent: true},
		{name: "standard kill foreign needs consent", c: std, tool: "kill_app", target: Target{Resource: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 200}}, consent: true},
		{name: "standard kill own", c: std, tool: "kill_app", target: Target{Resource: Resource{Kind: ResourceProcess, Op: OpTerminate, PID: 100, Owned: true}}},
		{name: "standard launch of a declared desktop entry", c: std, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm", Argv: []string{"/usr/bin/xterm"}, Declared: true}}},
		{name: "standard launch of anything else needs consent", c: std, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh", Argv: []string{"/usr/bin/sh", "-c", "id"}}}, consent: true},
		{name: "standard launch with a grant for exactly that command", c: std, tool: "launch_app", target: Target{Resource: shGrant}, grants: &held},
		{name: "standard launch grant covers no other command", c: std, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh", Argv: []string{"/usr/bin/sh", "-c", "id;rm"}}}, grants: &held, consent: true},
		{name: "unrestricted launch of anything", c: unr, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh", Argv: []string{"/usr/bin/sh", "-c", "id"}}}},
		{name: "unrestricted foreign window", c: unr, tool: "click", target: Target{Resource: foreign}},
		{name: "unrestricted display", c: unr, tool: "get_desktop_state", target: Target{Resource: display}},
		{name: "bounded own app", c: bnd, tool: "click", target: Target{Resource: own}},
		{name: "bounded foreign process of a listed app", c: bnd, tool: "click", target: Target{Resource: foreignXterm}},
		{name: "bounded foreign app", c: bnd, tool: "click", target: Target{Resource: foreign}, want: CodeOutsideManifest},
		{name: "bounded denied tool", c: bnd, tool: "zoom", target: Target{Resource: own}, want: CodeManifestDenied},
		{name: "bounded unlisted tool", c: bnd, tool: "get_desktop_state", target: Target{Resource: display}, want: CodeOutsideManifest},
		{name: "bounded R0 listed", c: bnd, tool: "get_screen_size", target: Target{}},
		{name: "bounded without manifest", c: &Authority{Mode: Bounded}, tool: "get_screen_size", target: Target{}, want: CodeOutsideManifest},
		{name: "bounded launch listed", c: bnd, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/xterm"}}},
		{name: "bounded launch unlisted", c: bnd, tool: "launch_app", target: Target{Resource: Resource{Kind: ResourceApplication, Op: OpLaunch, Executable: "/usr/bin/sh"}}, want: CodeOutsideManifest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := pipe.Decide(context.Background(), tt.c, tt.tool, nil, &tt.target, tt.grants, t0)
			switch {
			case tt.want == "" && d.Refusal != nil:
				t.Errorf("Decide(%s) = %v, want allowed", tt.tool, d.Refusal)
			case tt.want != "" && (d.Refusal == nil || d.Refusal.Code != tt.want):
				t.Errorf("Decide(%s) = %+v, want %s", tt.tool, d, tt.want)
			case d.NeedsConsent != tt.consent:
				t.Errorf("Decide(%s).NeedsConsent = %v, want %v", tt.tool, d.NeedsConsent, tt.consent)
			}
		})
	}
}

func TestGrants(t *testing.T) {
	var g Grants
	k := Resource{Kind: ResourceWindow, Op: OpInput, PID: 1, Window: 2, StartTime: 3}.Key()
	if g.Covers(k, t0) {
		t.Fatal("empty grants cover")
	}
	g.Add(k, t0, t0.Add(time.Second))
	if !g.Covers(k, t0.Add(999*time.Millisecond)) {
		t.Error("grant not live before its end")
	}
	if g.Covers(k, t0.Add(time.Second)) {
		t.Error("grant live at its end")
	}
	if g.Len() != 0 {
		t.Error("expired grant kept")
	}
	g.Add(k, t0, t0) // zero TTL: nothing kept
	if g.Len() != 0 {
		t.Error("zero-TTL grant kept")
	}
	g.Add(k, t0, t0.Add(time.Hour))
	g.Revoke()
	g.Add(k, t0, t0.Add(time.Hour))
	if g.Covers(k, t0) || g.Len() != 0 {
		t.Error("grant survived Revoke")
	}
}

func TestNewAuthority(t *testing.T) {
	ceiling := Ceiling{AllowedModes: []Mode{Standard, Bounded}, MaxSessionTTL: 24 * time.Hour, MaxIdleTTL: time.Hour}
	man := []byte("version: 1\nexpires_after: 2h\nidle_timeout: 5m\nallow: {tools: [click]}\n")
	sum := mustManifest(t, string(man)).SHA256
	c, err := NewAuthority(ceiling, SessionRequest{Label: "b", Mode: Bounded, Manifest: man, ManifestSHA256: strings.ToUpper(sum), TTL: 8 * time.Hour, IdleTTL: time.Hour}, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Expires != t0.Add(2*time.Hour) || c.IdleTTL != 5*time.Minute || c.ManifestSHA256 != sum || c.Manifest == nil {
		t.Errorf("context = %+v, want the manifest's lifetimes", c)
	}
	for _, tt := range []struct {
		name string
		req  SessionRequest
		want string
	}{
		{name: "mode outside ceiling", req: SessionRequest{Mode: Unrestricted, TTL: time.Hour, IdleTTL: time.Minute}, want: "outside the host's ceiling"},
		{name: "bounded without manifest", req: SessionRequest{Mode: Bounded, TTL: time.Hour, IdleTTL: time.Minute}, want: "needs a manifest"},
		{name: "standard with manifest", req: SessionRequest{Mode: Standard, Manifest: man, ManifestSHA256: sum, TTL: time.Hour, IdleTTL: time.Minute}, want: "only bounded"},
		{name: "hash mismatch", req: SessionRequest{Mode: Bounded, Manifest: man, ManifestSHA256: strings.Repeat("0", 64), TTL: time.Hour, IdleTTL: time.Minute}, want: "hash mismatch"},
		{name: "malformed manifest", req: SessionRequest{Mode: Bounded, Manifest: []byte("version: 7\n"), ManifestSHA256: mustSum("version: 7\n"), TTL: time.Hour, IdleTTL: time.Minute}, want: "unsupported version"},
		{name: "idle too long", req: SessionRequest{Mode: Standard, TTL: time.Hour, IdleTTL: 2 * time.Hour}, want: "idle TTL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewAuthority(ceiling, tt.req, nil, t0); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewAuthority = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func mustSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// exposedTools are the shipped exposed tool names plus names the inventory does not know.
func toolNames() []string {
	var names []string
	for _, e := range DefaultInventory().Entries() {
		names = append(names, e.Tool)
	}
	return append(names, "clik", "noop", "type_text_chars", "")
}

var resourceKinds = []ResourceKind{ResourceNone, ResourceSession, ResourceWindowList, ResourceWindow, ResourceDisplay, ResourceProcess, ResourceClipboard, ResourceApplication, ResourceFile}

var executables = []string{"", "/usr/bin/xterm", "/usr/bin/firefox", "/opt/a/bin/a"}

func genResource() *rapid.Generator[Resource] {
	return rapid.Custom(func(t *rapid.T) Resource {
		return Resource{
			Kind:       rapid.SampledFrom(resourceKinds).Draw(t, "kind"),
			Op:         rapid.SampledFrom([]Operation{OpNone, OpObserve, OpInput, OpTerminate, OpLaunch, OpRead, OpWrite}).Draw(t, "op"),
			Path:       rapid.SampledFrom([]string{"", "/srv/out/a.png", "/srv/out/sub/b.png", "/srv/in/c.png", "/etc/passwd"}).Draw(t, "path"),
			PID:        rapid.IntRange(0, 5).Draw(t, "pid"),
			Window:     rapid.Uint32Range(0, 5).Draw(t, "window"),
			StartTime:  rapid.Uint64Range(0, 2).Draw(t, "start"),
			Executable: rapid.SampledFrom(executables).Draw(t, "exe"),
			Owned:      rapid.Bool().Draw(t, "owned"),
		}
	})
}

func genTarget() *rapid.Generator[Target] {
	return rapid.Custom(func(t *rapid.T) Target {
		tg := Target{Resource: genResource().Draw(t, "resource")}
		switch rapid.IntRange(0, 5).Draw(t, "special") {
		case 0:
			tg.SelfPID = rapid.IntRange(1, 5).Draw(t, "self")
		case 1:
			tg.ProtectedUIPID = rapid.IntRange(1, 5).Draw(t, "ui")
		case 2:
			tg.Unresolved = Refuse(CodeWindowNotFound, "gone")
		}
		return tg
	})
}

// genPolicy draws a YAML policy allowing and denying random tools (or no policy).
func genPolicy(t *rapid.T) *policy.Set {
	if rapid.IntRange(0, 4).Draw(t, "nopolicy") == 0 {
		return nil
	}
	names := DefaultInventory().Entries()
	var allow, deny []string
	for _, e := range names {
		switch rapid.IntRange(0, 2).Draw(t, "p:"+e.Tool) {
		case 1:
			allow = append(allow, e.Tool)
		case 2:
			deny = append(deny, e.Tool)
		}
	}
	src := fmt.Sprintf("allow: {tools: [%s]}\ndeny: {tools: [%s]}\n", strings.Join(allow, ", "), strings.Join(deny, ", "))
	return mustYAMLPolicy(t, src)
}

// genManifest draws a valid manifest as text and parses it.
func genManifest(t *rapid.T) *Manifest {
	var exposed []string
	for _, e := range DefaultInventory().Entries() {
		if e.Exposed() {
			exposed = append(exposed, e.Tool)
		}
	}
	var allow, deny []string
	for _, n := range exposed {
		switch rapid.IntRange(0, 2).Draw(t, "m:"+n) {
		case 1:
			allow = append(allow, n)
		case 2:
			deny = append(deny, n)
		}
	}
	if len(allow) == 0 {
		allow = append(allow, rapid.SampledFrom(exposed).Draw(t, "one"))
		deny = slices.DeleteFunc(deny, func(s string) bool { return s == allow[0] })
	}
	var apps []string
	for _, exe := range executables[1:] {
		if rapid.Bool().Draw(t, "app:"+exe) {
			apps = append(apps, fmt.Sprintf("{executable: %s, launch: %t, terminate: %s}", exe, rapid.Bool().Draw(t, "launch"),
				rapid.SampledFrom([]string{"deny", "driver_launched", "any"}).Draw(t, "terminate")))
		}
	}
	files := rapid.SampledFrom([]string{"{}", "{write: [{dir: /srv/out}]}", "{write: [{dir: /srv/out, recursive: true}], read: [/srv/in/c.png]}"}).Draw(t, "files")
	src := fmt.Sprintf("version: 1\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [%s]}\ndeny: {tools: [%s]}\n"+
		"resources: {apps: [%s], desktop: {observe: %t, input: %t}, clipboard: {read: %t, write: %t}, files: %s}\n",
		strings.Join(allow, ", "), strings.Join(deny, ", "), strings.Join(apps, ", "),
		rapid.Bool().Draw(t, "dobs"), rapid.Bool().Draw(t, "din"), rapid.Bool().Draw(t, "cr"), rapid.Bool().Draw(t, "cw"), files)
	return mustManifest(t, src)
}

// Unrestricted never turns a policy deny (or a hard invariant) into an allow: whatever
// unrestricted allows, the policy allows, and the call names no protected process.
func TestPropertyUnrestrictedNeverWidensPolicy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pol := genPolicy(t)
		pipe := NewPipeline(pol, nil)
		tool := rapid.SampledFrom(toolNames()).Draw(t, "tool")
		tg := genTarget().Draw(t, "target")
		d := pipe.Decide(context.Background(), &Authority{Mode: Unrestricted}, tool, nil, &tg, nil, t0)
		if d.NeedsConsent {
			t.Fatalf("unrestricted asked for consent: %+v", d)
		}
		if d.Refusal != nil {
			return
		}
		if pd := pol.Decide(context.Background(), tool, nil); !pd.Allow {
			t.Fatalf("unrestricted allowed %s that the policy denies (%s)", tool, pd.Reason)
		}
		if tg.SelfPID != 0 || tg.ProtectedUIPID != 0 || tg.Unresolved != nil {
			t.Fatalf("unrestricted allowed %s on %+v", tool, tg)
		}
		// Whatever unrestricted allows, the other modes allow only with less.
		for _, c := range []*Authority{{Mode: Standard}, {Mode: Bounded, Manifest: genManifest(t)}} {
			if other := pipe.Decide(context.Background(), c, tool, nil, &tg, nil, t0); other.Refusal != nil && other.Refusal.Code == CodePermissionDenied {
				t.Fatalf("%s refused %s by policy although unrestricted allowed it", c.Mode, tool)
			}
		}
	})
}

// Bounded never allows a tool outside its manifest, nor a resource the manifest does not
// cover, and never asks for consent.
func TestPropertyBoundedStaysInsideManifest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genManifest(t)
		pipe := NewPipeline(nil, nil)
		tool := rapid.SampledFrom(toolNames()).Draw(t, "tool")
		tg := genTarget().Draw(t, "target")
		d := pipe.Decide(context.Background(), &Authority{Mode: Bounded, Manifest: m}, tool, nil, &tg, nil, t0)
		if d.NeedsConsent {
			t.Fatalf("bounded asked for consent")
		}
		if d.Refusal != nil {
			return
		}
		if !m.Allows(tool) {
			t.Fatalf("bounded allowed %s outside allow.tools %v / deny.tools %v", tool, m.AllowTools, m.DenyTools)
		}
		r := tg.Resource
		switch r.Kind {
		case ResourceWindow, ResourceProcess:
			if _, ok := m.App(r.Executable); !ok {
				t.Fatalf("bounded allowed %s on %s (%s) outside resources.apps", tool, r, r.Executable)
			}
		case ResourceApplication:
			if a, ok := m.App(r.Executable); !ok || !a.Launch {
				t.Fatalf("bounded allowed launching %s", r.Executable)
			}
		case ResourceDisplay:
			if (r.Op == OpObserve && !m.DesktopObserve) || (r.Op == OpInput && !m.DesktopInput) {
				t.Fatalf("bounded allowed %s on the display without the grant", r.Op)
			}
		case ResourceClipboard:
			if (r.Op == OpObserve && !m.ClipboardRead) || (r.Op == OpInput && !m.ClipboardWrite) {
				t.Fatalf("bounded allowed %s on the clipboard without the grant", r.Op)
			}
		case ResourceFile:
			grants := map[Operation][]PathGrant{OpRead: m.FilesRead, OpWrite: m.FilesWrite}[r.Op]
			if !pathAllowed(r.Path, grants) {
				t.Fatalf("bounded allowed %s of %q outside resources.files", r.Op, r.Path)
			}
		}
	})
}

// A file a call names is never read or written without a grant in standard mode, whatever
// the tool's own behaviour (clipboard_write runs freely, its image_path does not).
func TestPropertyStandardFilesNeedConsent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pipe := NewPipeline(nil, nil)
		tool := rapid.SampledFrom([]string{"clipboard_write", "get_window_state", "zoom", "get_desktop_state"}).Draw(t, "tool")
		file := Resource{Kind: ResourceFile, Op: rapid.SampledFrom([]Operation{OpRead, OpWrite}).Draw(t, "op"), Path: "/srv/out/a.png"}
		tg := Target{Resource: Resource{Kind: ResourceClipboard, Op: OpInput}, Also: []Resource{file}}
		var g Grants
		granted := rapid.Bool().Draw(t, "granted")
		if granted {
			g.Add(file.Key(), t0, t0.Add(time.Minute))
		}
		owns := rapid.Bool().Draw(t, "owns display")
		d := pipe.Decide(context.Background(), &Authority{Mode: Standard, OwnsDisplay: owns}, tool, nil, &tg, &g, t0)
		if d.Refusal != nil {
			t.Fatalf("refused: %v", d.Refusal)
		}
		if asked := slices.ContainsFunc(d.AlsoConsent, func(r Resource) bool { return r.Key() == file.Key() }); asked == granted {
			t.Fatalf("%s: AlsoConsent %v with granted=%v", tool, d.AlsoConsent, granted)
		}
		d = pipe.Decide(context.Background(), &Authority{Mode: Unrestricted}, tool, nil, &tg, nil, t0)
		if d.Refusal != nil || len(d.AlsoConsent) > 0 || d.NeedsConsent {
			t.Fatalf("unrestricted: %+v", d)
		}
	})
}

// A grant never covers another resource or another operation class.
func TestPropertyGrantCoversExactlyItsScope(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		granted := genResource().Draw(t, "granted")
		asked := genResource().Draw(t, "asked")
		var g Grants
		g.Add(granted.Key(), t0, t0.Add(time.Minute))
		if g.Covers(asked.Key(), t0) != (granted.Key() == asked.Key()) {
			t.Fatalf("grant for %+v covers %+v: %v", granted.Key(), asked.Key(), g.Covers(asked.Key(), t0))
		}
		// And through the pipeline: a standard call on asked needs consent unless the
		// grant's scope is exactly asked's (or asked needs no grant at all).
		pipe := NewPipeline(nil, nil)
		e, _ := DefaultInventory().Lookup("click")
		if asked.Kind == ResourceWindow || asked.Kind == ResourceDisplay {
			tg := Target{Resource: asked}
			d := pipe.Decide(context.Background(), &Authority{Mode: Standard}, e.Tool, nil, &tg, &g, t0)
			want := needsGrant(asked) && granted.Key() != asked.Key()
			if d.NeedsConsent != want {
				t.Fatalf("NeedsConsent = %v, want %v (granted %+v, asked %+v)", d.NeedsConsent, want, granted, asked)
			}
		}
	})
}
