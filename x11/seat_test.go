package x11_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"

	"github.com/cua-host/cua-host/internal/xinput2"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// xinputList returns `xinput list --name-only`: the server's own account of its devices.
func xinputList(t *testing.T) string {
	t.Helper()
	return harness.Command(t, "xinput", "list", "--name-only")
}

// TestSeatInputLeavesThePersonsPointerAndFocus: a session's own devices click into one
// window and type into another while the core pointer and the core keyboard focus stay
// where the person left them, as the server reports them (xdotool).
func TestSeatInputLeavesThePersonsPointerAndFocus(t *testing.T) {
	b := open(t)
	file, term := startCat(t, b)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	person := windowOf(t, b, xl)
	activate(t, b, person.ID)
	park := x11.Point{X: 3, Y: 5}
	if err := b.Core().MoveTo(t.Context(), park); err != nil {
		t.Fatal(err)
	}
	wantLoc := fmt.Sprintf("x:%d y:%d", park.X, park.Y)
	wantFocus := fmt.Sprint(person.ID)
	checkPerson := func(when string) {
		t.Helper()
		if loc := harness.Command(t, "xdotool", "getmouselocation"); !strings.HasPrefix(loc, wantLoc+" ") {
			t.Errorf("%s: core pointer at %q, want %s", when, loc, wantLoc)
		}
		if f := strings.TrimSpace(harness.Command(t, "xdotool", "getwindowfocus")); f != wantFocus {
			t.Errorf("%s: core focus on %s, want the person's window %s", when, f, wantFocus)
		}
	}

	seat, err := b.OpenSeat(t.Context(), "seat-test")
	if err != nil {
		t.Fatalf("OpenSeat: %v", err)
	}
	defer seat.Close(context.Background())
	if list := xinputList(t); !strings.Contains(list, seat.Name()+" pointer") || !strings.Contains(list, seat.Name()+" keyboard") {
		t.Fatalf("xinput list lacks the pair %q:\n%s", seat.Name(), list)
	}
	dev := seat.Devices()

	if err := seat.Focus(t.Context(), term); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	text := "seat typing: Grüße ✓ Ωmega {x}|~\n"
	if _, err := dev.TypeText(t.Context(), text); err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	waitFile(t, file, strings.ReplaceAll(text, "\n", "\n"))
	checkPerson("after typing")

	xl.Reset()
	p := x11.Point{X: person.Frame.X + 40, Y: person.Frame.Y + 30}
	if err := dev.Click(t.Context(), p, x11.ButtonLeft, 1, nil); err != nil {
		t.Fatalf("Click: %v", err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) > 0 })
	if btn := harness.Filter(evs, "button_press"); len(btn) != 1 || btn[0].X != 40 || btn[0].Y != 30 {
		t.Errorf("the window got presses %+v, want one at (40,30)", btn)
	}
	if got, err := dev.Pointer(t.Context()); err != nil || got != p {
		t.Errorf("session pointer = %v, %v; want %v", got, err, p)
	}
	checkPerson("after clicking")

	seat.Close(t.Context())
	if list := xinputList(t); strings.Contains(list, seat.Name()) {
		t.Errorf("after Close the pair is still listed:\n%s", list)
	}
	if err := dev.Click(t.Context(), p, x11.ButtonLeft, 1, nil); !errorsIs(err, x11.ErrClosed) {
		t.Errorf("Click after Close = %v, want ErrClosed", err)
	}
}

// TestRemoveStaleSeats: a pair left by a process that is gone is removed; this process's
// own and foreign pairs stay.
func TestRemoveStaleSeats(t *testing.T) {
	b := open(t)
	const deadPID = 1 << 30 // above pid_max: never a live process
	stale := fmt.Sprintf("cua-host crashed (pid %d)", deadPID)
	harness.Command(t, "xinput", "create-master", stale)
	harness.Command(t, "xinput", "create-master", "someone else")
	t.Cleanup(func() { _ = execCommand("xinput", "remove-master", "someone else pointer").Run() })
	own, err := b.OpenSeat(t.Context(), "mine")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
	removed, err := b.RemoveStaleSeats(t.Context(), func(pid int) bool { return pid == deadPID || pid == os.Getpid() })
	if err != nil {
		t.Fatalf("RemoveStaleSeats: %v", err)
	}
	if len(removed) != 1 || removed[0] != stale+" pointer" {
		t.Errorf("removed %q, want only %q", removed, stale+" pointer")
	}
	list := xinputList(t)
	if strings.Contains(list, stale) || !strings.Contains(list, own.Name()) || !strings.Contains(list, "someone else pointer") {
		t.Errorf("after RemoveStaleSeats:\n%s", list)
	}
}

// TestRemovedSeatReleasesWhatItHeld: removing the pair of a process that died with a
// button down releases the button first: the window that got the press gets the release.
func TestRemovedSeatReleasesWhatItHeld(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 300, Height: 200})
	w := windowOf(t, b, xl)
	seat, err := b.OpenSeat(t.Context(), "held")
	if err != nil {
		t.Fatal(err)
	}
	defer seat.Close(context.Background())
	p := x11.Point{X: w.Frame.X + 10, Y: w.Frame.Y + 10}
	if err := seat.Devices().ButtonDown(t.Context(), p, x11.ButtonLeft); err != nil {
		t.Fatal(err)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_press")) == 1 })
	// Another connection removes the pair, as a host does for its killed worker.
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := xinput2.Init(c); err != nil {
		t.Fatal(err)
	}
	removed, err := xinput2.RemoveSeats(c, func(pid int) bool { return pid == os.Getpid() })
	if err != nil || len(removed) != 1 {
		t.Fatalf("RemoveSeats = %v, %v", removed, err)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool { return len(harness.Filter(evs, "button_release")) == 1 })
}
