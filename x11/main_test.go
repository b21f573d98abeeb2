package x11_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// open returns a backend on the harness display, closed at cleanup.
func open(t testing.TB) *x11.Backend {
	t.Helper()
	harness.Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	b, err := x11.Open(ctx, x11.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// windowOf returns xevlog's window as the backend sees it.
func windowOf(t testing.TB, b *x11.Backend, x *harness.Xevlog) x11.Window {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w, err := b.Window(t.Context(), x.Window)
		if err == nil && w.Mapped {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("Window(0x%x): %v", x.Window, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// activate gives xevlog's window the focus.
func activate(t testing.TB, b *x11.Backend, id uint32) {
	t.Helper()
	if _, ok, err := b.Activate(t.Context(), id); err != nil || !ok {
		t.Fatalf("Activate(0x%x) = %v, %v", id, ok, err)
	}
}

func TestOpenWithoutDisplay(t *testing.T) {
	for _, name := range []string{":987", "nonsense"} {
		if _, err := x11.Open(t.Context(), x11.Options{Display: name}); !errorsIs(err, x11.ErrNoDisplay) {
			t.Errorf("Open(%q) = %v, want ErrNoDisplay", name, err)
		}
	}
	t.Setenv("DISPLAY", "")
	if _, err := x11.Open(t.Context(), x11.Options{}); !errorsIs(err, x11.ErrNoDisplay) {
		t.Errorf("Open with DISPLAY unset = %v, want ErrNoDisplay", err)
	}
}

func TestCloseIsIdempotentAndFinal(t *testing.T) {
	b := open(t)
	if err := b.ClipboardWrite(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
	if _, err := b.Windows(t.Context()); !errorsIs(err, x11.ErrClosed) {
		t.Errorf("Windows after Close = %v, want ErrClosed", err)
	}
	if err := b.Core().MoveTo(t.Context(), x11.Point{X: 1, Y: 1}); !errorsIs(err, x11.ErrClosed) {
		t.Errorf("MoveTo after Close = %v, want ErrClosed", err)
	}
	b.ReleaseAll(t.Context())
}
