package personui

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// mapObserver is an X client of the test's own that reports when a top-level window is
// mapped, whoever's it is: a window manager frame, or the window itself without one —
// override-redirect windows (the indicator) only when asked for. It does not use this
// package.
type mapObserver struct {
	x      *xgb.Conn
	mapped chan time.Time
	done   chan struct{}
}

func newMapObserver(tb testing.TB, overrideRedirect bool) *mapObserver {
	tb.Helper()
	x, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		tb.Fatalf("observer: %v", err)
	}
	root := xproto.Setup(x).DefaultScreen(x).Root
	if err := xproto.ChangeWindowAttributesChecked(x, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		tb.Fatalf("observer: %v", err)
	}
	o := &mapObserver{x: x, mapped: make(chan time.Time, 64), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			if m, ok := ev.(xproto.MapNotifyEvent); ok && m.Event == root && m.OverrideRedirect == overrideRedirect {
				select {
				case o.mapped <- time.Now():
				default:
				}
			}
		}
	}()
	tb.Cleanup(func() { x.Close(); <-o.done })
	return o
}

// next returns when the next top-level window is mapped.
func (o *mapObserver) next(tb testing.TB) time.Time {
	tb.Helper()
	select {
	case t := <-o.mapped:
		return t
	case <-time.After(10 * time.Second):
		tb.Fatal("no window mapped within 10 s")
	}
	return time.Time{}
}

func (o *mapObserver) drain() {
	for {
		select {
		case <-o.mapped:
		default:
			return
		}
	}
}

func reportP50(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, name+"-max-ms")
}

// BenchmarkAskMapped measures the time from calling Ask to the dialog's frame being mapped,
// as the independent observer sees it, and to OnShown (mapped, fully visible, placed).
// Run: go test ./host/personui/ -run '^$' -bench Ask -benchtime 20x
func BenchmarkAskMapped(b *testing.B) {
	requireDisplay(b)
	o := newMapObserver(b, false)
	var mapped, shown []time.Duration
	for b.Loop() {
		o.drain()
		ctx, cancel := context.WithCancel(b.Context())
		shownAt := make(chan time.Time, 4)
		opts := testOptions()
		opts.OnShown = func(Shown) { shownAt <- time.Now() }
		start := time.Now()
		res := make(chan struct{})
		go func() {
			defer close(res)
			_, _ = Ask(ctx, opts, windowRequest())
		}()
		mapped = append(mapped, o.next(b).Sub(start))
		select {
		case t := <-shownAt:
			shown = append(shown, t.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("not shown")
		}
		cancel()
		<-res
	}
	reportP50(b, "mapped", mapped)
	reportP50(b, "shown", shown)
}

// BenchmarkIndicatorSetMapped measures the time from Set with a session, on a hidden
// indicator, to its (override-redirect) window being mapped as the observer sees it.
func BenchmarkIndicatorSetMapped(b *testing.B) {
	requireDisplay(b)
	o := newMapObserver(b, true)
	ind, err := NewIndicator(b.Context(), testOptions(), func() {}, func(string) {})
	if err != nil {
		b.Fatal(err)
	}
	defer ind.Close()
	var mapped []time.Duration
	for b.Loop() {
		o.drain()
		start := time.Now()
		ind.Set([]Session{{Label: "build-bot", Mode: "standard"}})
		mapped = append(mapped, o.next(b).Sub(start))
		b.StopTimer()
		ind.Set(nil)
		time.Sleep(50 * time.Millisecond)
		b.StartTimer()
	}
	reportP50(b, "mapped", mapped)
}

// BenchmarkStopKey measures the time from the stop key's press (Escape with Ctrl, Alt and
// Shift held, sent with XTEST by a client of the benchmark's own: Xvfb has no physical
// keyboard) to onStop.
func BenchmarkStopKey(b *testing.B) {
	requireDisplay(b)
	stopped := make(chan time.Time, 1)
	ind, err := NewIndicator(b.Context(), testOptions(), func() { stopped <- time.Now() }, func(string) {})
	if err != nil {
		b.Fatal(err)
	}
	defer ind.Close()
	x, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	if err := xtest.Init(x); err != nil {
		b.Fatal(err)
	}
	var mods []byte
	for _, sym := range []xproto.Keysym{0xffe3, 0xffe9, 0xffe1} { // Control_L, Alt_L, Shift_L
		k, err := keycodesOf(x, sym)
		if err != nil || len(k) == 0 {
			b.Fatalf("no keycode for 0x%x: %v", sym, err)
		}
		mods = append(mods, k[0])
	}
	esc, err := keycodesOf(x, keysymEscape)
	if err != nil || len(esc) == 0 {
		b.Fatalf("no keycode for Escape: %v", err)
	}
	key := func(typ, kc byte) { xtest.FakeInput(x, typ, kc, 0, 0, 0, 0, 0) }
	for _, kc := range mods {
		key(xproto.KeyPress, kc)
	}
	defer func() {
		for _, kc := range mods {
			key(xproto.KeyRelease, kc)
		}
		_, _ = xproto.GetInputFocus(x).Reply()
	}()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		key(xproto.KeyPress, esc[0])
		key(xproto.KeyRelease, esc[0])
		select {
		case t := <-stopped:
			lat = append(lat, t.Sub(start))
		case <-time.After(5 * time.Second):
			b.Fatal("onStop not called within 5 s of the stop key")
		}
	}
	reportP50(b, "stopped", lat)
}
