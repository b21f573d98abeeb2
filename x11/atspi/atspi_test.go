package atspi_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/x11/atspi"
)

func TestMain(m *testing.M) { os.Exit(a11yenv.Main(m)) }

// client returns a client on the shared bus, closed at cleanup.
func client(t *testing.T, opts atspi.Options) (*atspi.Client, *a11yenv.Bus) {
	t.Helper()
	b := a11yenv.Shared(t)
	if opts.SessionBusAddress == "" {
		opts.SessionBusAddress = b.Addr
	}
	c := atspi.New(opts)
	t.Cleanup(func() { c.Close() })
	return c, b
}

// window describes app's window as the X server sees it.
func window(t *testing.T, app *a11yenv.App, title string) atspi.Window {
	t.Helper()
	x, y, w, h := a11yenv.Geometry(t, app.Window)
	return atspi.Window{ID: app.Window, PID: app.PID, Title: title, Frame: atspi.Rect{X: x, Y: y, Width: w, Height: h}}
}

// snapshot walks w until the application has registered (its tree is not degraded).
func snapshot(t *testing.T, c *atspi.Client, w atspi.Window, o atspi.WalkOptions) *atspi.Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := c.Snapshot(t.Context(), w, o)
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		if !s.Degraded || time.Now().After(deadline) {
			if s.Degraded {
				t.Fatalf("Snapshot stays degraded: %s", s.DegradedReason)
			}
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func find(t *testing.T, s *atspi.Snapshot, role, name string) *atspi.Element {
	t.Helper()
	for i := range s.Elements {
		if e := &s.Elements[i]; e.Role == role && e.Name == name {
			return e
		}
	}
	t.Fatalf("no %s %q in\n%s", role, name, atspi.Markdown(s.Elements))
	return nil
}

func TestZenityEntryTree(t *testing.T) {
	c, b := client(t, atspi.Options{})
	app := a11yenv.Zenity(t, b, "--entry", "--title", "CUA probe", "--text", "Type here:")
	w := window(t, app, "CUA probe")
	s := snapshot(t, c, w, atspi.WalkOptions{})
	md := atspi.Markdown(s.Elements)
	t.Logf("walk %v, %d calls, %d objects, matched by %s:\n%s", s.Duration, s.Calls, s.Visited, s.MatchedBy, md)
	if s.Truncated || s.App != "zenity" {
		t.Errorf("Truncated = %v %v, App = %q", s.Truncated, s.Reasons, s.App)
	}
	if len(md) > 2048 {
		t.Errorf("markdown is %d bytes, want ≤ 2048", len(md))
	}
	dialog := find(t, s, "dialog", "CUA probe")
	label := find(t, s, "label", "Type here:")
	ok := find(t, s, "push button", "OK")
	cancel := find(t, s, "push button", "Cancel")
	var entry *atspi.Element
	for i := range s.Elements {
		if s.Elements[i].Role == "text" && s.Elements[i].Editable {
			entry = &s.Elements[i]
		}
	}
	if entry == nil || entry.Value == nil || *entry.Value != "" || !strings.Contains(strings.Join(entry.Actions, ","), "activate") {
		t.Fatalf("entry = %+v", entry)
	}
	if dialog.Index != 0 || dialog.Parent != nil || ok.Parent == nil {
		t.Errorf("dialog = %+v, ok = %+v", dialog, ok)
	}
	if got := strings.Join(ok.Actions, ","); got != "click" || !contains(ok.States, "default") {
		t.Errorf("OK actions %v states %v", ok.Actions, ok.States)
	}
	// The toolkit reports the top level with its decorations: it contains the client area.
	if d := dialog.ScreenFrame; d == nil || !d.Contains(w.Frame.X, w.Frame.Y) || !d.Contains(w.Frame.X+w.Frame.Width-1, w.Frame.Y+w.Frame.Height-1) {
		t.Errorf("dialog screen frame %+v does not contain the X client area %+v", dialog.ScreenFrame, w.Frame)
	}
	for _, e := range []*atspi.Element{label, entry, ok, cancel} {
		sf, f := e.ScreenFrame, e.Frame
		if sf == nil || f == nil {
			t.Fatalf("%s %q has no frame", e.Role, e.Name)
		}
		if sf.X != w.Frame.X+f.X || sf.Y != w.Frame.Y+f.Y || sf.Width != f.Width {
			t.Errorf("%s %q: screen %+v vs window %+v + origin %d,%d", e.Role, e.Name, sf, f, w.Frame.X, w.Frame.Y)
		}
		if f.X < 0 || f.Y < 0 || f.X+f.Width > w.Frame.Width || f.Y+f.Height > w.Frame.Height {
			t.Errorf("%s %q frame %+v lies outside the %dx%d client area", e.Role, e.Name, f, w.Frame.Width, w.Frame.Height)
		}
	}
	if !(label.Frame.Y < entry.Frame.Y && entry.Frame.Y < ok.Frame.Y && cancel.Frame.X < ok.Frame.X) {
		t.Errorf("layout: label %+v entry %+v cancel %+v ok %+v", label.Frame, entry.Frame, cancel.Frame, ok.Frame)
	}
	if strings.Contains(app.Stderr(), "CRITICAL") {
		t.Errorf("the walk made zenity log CRITICALs:\n%s", app.Stderr())
	}
	for i, e := range s.Elements {
		if e.Index != i || e.Token != (atspi.Target{SnapshotID: s.ID, Index: i}).Token() {
			t.Errorf("element %d: index %d token %q", i, e.Index, e.Token)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSetTextAndPressOK(t *testing.T) {
	c, b := client(t, atspi.Options{})
	app := a11yenv.Zenity(t, b, "--entry", "--title", "CUA set", "--text", "Name:")
	s := snapshot(t, c, window(t, app, "CUA set"), atspi.WalkOptions{})
	var entry *atspi.Element
	for i := range s.Elements {
		if s.Elements[i].Editable {
			entry = &s.Elements[i]
		}
	}
	const text = "héllo from AT-SPI ✓"
	out, err := c.SetText(t.Context(), entry, text)
	if err != nil || !out.Verified || out.Route != atspi.RouteEditableText || out.Evidence["read_back"] != text {
		t.Fatalf("SetText = %+v, %v", out, err)
	}
	out, err = c.InsertText(t.Context(), entry, "!")
	if err != nil || !out.Verified {
		t.Fatalf("InsertText = %+v, %v", out, err)
	}
	out, err = c.Press(t.Context(), find(t, s, "push button", "OK"), atspi.PressClick)
	if err != nil || !out.Verified || out.Route != atspi.RouteAction || out.Evidence["action"] != "click" {
		t.Fatalf("Press(OK) = %+v, %v", out, err)
	}
	if !app.WaitExit(5 * time.Second) {
		t.Fatal("zenity did not exit after OK")
	}
	if got := strings.TrimSpace(app.Stdout()); got != text+"!" {
		t.Errorf("zenity printed %q, want %q", got, text+"!")
	}
	// The application is gone: its elements are stale.
	if _, err := c.Live(t.Context(), entry); !errors.Is(err, atspi.ErrStale) {
		t.Errorf("Live after exit = %v, want ErrStale", err)
	}
}

func TestSliderValue(t *testing.T) {
	c, b := client(t, atspi.Options{})
	app := a11yenv.Zenity(t, b, "--scale", "--title", "CUA scale", "--text", "Level", "--value", "30", "--min-value", "0", "--max-value", "100")
	s := snapshot(t, c, window(t, app, "CUA scale"), atspi.WalkOptions{})
	t.Logf("\n%s", atspi.Markdown(s.Elements))
	var slider *atspi.Element
	for i := range s.Elements {
		if s.Elements[i].Role == "slider" {
			slider = &s.Elements[i]
		}
	}
	if slider == nil || slider.Value == nil || *slider.Value != "30" || slider.Range == nil || slider.Range.Max != 100 {
		t.Fatalf("slider = %+v", slider)
	}
	if _, err := c.SetValue(t.Context(), slider, 101); !errors.Is(err, atspi.ErrOutOfRange) {
		t.Errorf("SetValue(101) = %v, want ErrOutOfRange", err)
	}
	out, err := c.SetValue(t.Context(), slider, 70)
	if err != nil || !out.Verified || out.Route != atspi.RouteValue {
		t.Fatalf("SetValue(70) = %+v, %v", out, err)
	}
	if _, err := c.SetText(t.Context(), slider, "x"); !errors.Is(err, atspi.ErrUnsupported) {
		t.Errorf("SetText on a slider = %v, want ErrUnsupported", err)
	}
	if _, err := c.Press(t.Context(), find(t, s, "push button", "OK"), atspi.PressClick); err != nil {
		t.Fatal(err)
	}
	if !app.WaitExit(5 * time.Second) {
		t.Fatal("zenity did not exit")
	}
	if got := strings.TrimSpace(app.Stdout()); got != "70" {
		t.Errorf("zenity printed %q, want 70", got)
	}
}

func bigList(t *testing.T, b *a11yenv.Bus, title string, rows int) *a11yenv.App {
	t.Helper()
	args := []string{"--list", "--title", title, "--column=x", "--width", "300", "--height", "400"}
	for i := range rows {
		args = append(args, "row "+strconv.Itoa(i))
	}
	return a11yenv.Zenity(t, b, args...)
}

func TestLargeListIsTruncated(t *testing.T) {
	c, b := client(t, atspi.Options{})
	app := bigList(t, b, "CUA list", 3000)
	w := window(t, app, "CUA list")
	s := snapshot(t, c, w, atspi.WalkOptions{MaxElements: 100})
	t.Logf("walk %v, %d calls, %d objects, %d elements, reasons %v", s.Duration, s.Calls, s.Visited, len(s.Elements), s.Reasons)
	if !s.Truncated || !contains(s.Reasons, atspi.ReasonMaxElements) || len(s.Elements) != 100 {
		t.Fatalf("Truncated = %v %v with %d elements; want max_elements and 100", s.Truncated, s.Reasons, len(s.Elements))
	}
	// The shallow, on-screen controls win over thousands of rows.
	find(t, s, "push button", "OK")
	find(t, s, "push button", "Cancel")
	find(t, s, "table cell", "row 0")

	if strings.Contains(app.Stderr(), "CRITICAL") {
		t.Errorf("the walk made zenity log CRITICALs:\n%s", app.Stderr())
	}
	// A tight deadline on an unbounded walk: it stops in time and says so.
	start := time.Now()
	s, err := c.Snapshot(t.Context(), w, atspi.WalkOptions{MaxElements: atspi.MaxElements, Timeout: 40 * time.Millisecond})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("deadline walk %v (%v), %d objects, reasons %v, degraded %q", took, s.Duration, s.Visited, s.Reasons, s.DegradedReason)
	if took > time.Second {
		t.Errorf("a 40ms walk took %v", took)
	}
	if !s.Truncated && !s.Degraded {
		t.Errorf("a 40ms walk over 3000 rows was not truncated: %d objects", s.Visited)
	}
	if s.Truncated && !contains(s.Reasons, atspi.ReasonDeadline) && !contains(s.Reasons, atspi.ReasonMaxElements) {
		t.Errorf("reasons %v", s.Reasons)
	}
}

func TestStoppedApplication(t *testing.T) {
	c, b := client(t, atspi.Options{CallTimeout: 300 * time.Millisecond})
	app := a11yenv.Zenity(t, b, "--entry", "--title", "CUA stopped", "--text", "x")
	w := window(t, app, "CUA stopped")
	s := snapshot(t, c, w, atspi.WalkOptions{})
	ok := find(t, s, "push button", "OK")
	app.Stop()
	t.Cleanup(app.Continue)
	start := time.Now()
	s2, err := c.Snapshot(t.Context(), w, atspi.WalkOptions{Timeout: 5 * time.Second})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped: %v degraded=%v %q", took, s2.Degraded, s2.DegradedReason)
	if took > 2*time.Second {
		t.Errorf("walk of a stopped app took %v", took)
	}
	if !s2.Degraded || !strings.HasPrefix(s2.DegradedReason, atspi.DegradedNotResponding) || len(s2.Elements) != 1 || s2.Elements[0].Role != "window" {
		t.Errorf("stopped snapshot = degraded %v %q, %d elements", s2.Degraded, s2.DegradedReason, len(s2.Elements))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if _, err := c.Press(ctx, ok, atspi.PressClick); !errors.Is(err, atspi.ErrNotResponding) {
		t.Errorf("Press on a stopped app = %v, want ErrNotResponding", err)
	}
	app.Continue()
	snapshot(t, c, w, atspi.WalkOptions{}) // it answers again
	if strings.TrimSpace(app.Stdout()) != "" {
		t.Errorf("the refused press had an effect: zenity printed %q", app.Stdout())
	}
}

func TestPlainXClientDegrades(t *testing.T) {
	c, b := client(t, atspi.Options{})
	app := a11yenv.Start(t, b, nil, "xterm", "-title", "plain")
	w := window(t, app, "plain")
	s, err := c.Snapshot(t.Context(), w, atspi.WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Degraded || !strings.HasPrefix(s.DegradedReason, atspi.DegradedNoApplication) {
		t.Fatalf("xterm snapshot: degraded %v %q", s.Degraded, s.DegradedReason)
	}
	el := s.Elements[0]
	if len(s.Elements) != 1 || el.Role != "window" || el.Name != "plain" || *el.ScreenFrame != w.Frame || el.Accessible() {
		t.Errorf("geometry element = %+v", el)
	}
	if _, err := c.Press(t.Context(), &s.Elements[0], atspi.PressClick); !errors.Is(err, atspi.ErrUnsupported) {
		t.Errorf("Press on a geometry element = %v, want ErrUnsupported", err)
	}
}

func TestNoBusDegrades(t *testing.T) {
	a11yenv.Require(t)
	for _, addr := range []string{"unix:path=/nonexistent/bus", "nonsense"} {
		c := atspi.New(atspi.Options{SessionBusAddress: addr})
		w := atspi.Window{ID: 1, PID: os.Getpid(), Title: "t", Frame: atspi.Rect{Width: 10, Height: 10}}
		s, err := c.Snapshot(t.Context(), w, atspi.WalkOptions{})
		if err != nil || !s.Degraded || !strings.HasPrefix(s.DegradedReason, atspi.DegradedUnavailable) {
			t.Errorf("Snapshot on %q = %+v, %v; want degraded %s", addr, s, err, atspi.DegradedUnavailable)
		}
		if ok, _ := c.Configured(); !ok {
			t.Errorf("Configured() with an address = false")
		}
		c.Close()
		c.Close()
		if _, err := c.Snapshot(t.Context(), w, atspi.WalkOptions{}); !errors.Is(err, atspi.ErrClosed) {
			t.Errorf("Snapshot after Close = %v, want ErrClosed", err)
		}
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	c := atspi.New(atspi.Options{})
	defer c.Close()
	if ok, why := c.Configured(); ok || !strings.Contains(why, "DBUS_SESSION_BUS_ADDRESS") {
		t.Errorf("Configured() without a bus = %v, %q", ok, why)
	}
}

func TestDoneClosesClient(t *testing.T) {
	_, b := client(t, atspi.Options{})
	done := make(chan struct{})
	c := atspi.New(atspi.Options{SessionBusAddress: b.Addr, Done: done})
	app := a11yenv.Zenity(t, b, "--info", "--title", "CUA done", "--text", "hi")
	snapshot(t, c, window(t, app, "CUA done"), atspi.WalkOptions{})
	close(done)
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, err := c.Snapshot(t.Context(), atspi.Window{ID: 1, PID: 1}, atspi.WalkOptions{}); errors.Is(err, atspi.ErrClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client still open after Done")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
}
