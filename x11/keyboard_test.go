package x11_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// startCat runs `xterm -u8 -e sh -c 'cat > FILE'` and returns FILE and the window, focused.
func startCat(t *testing.T, b *x11.Backend) (file string, win uint32) {
	t.Helper()
	file, win, _ = startCatPID(t, b)
	return file, win
}

// startCatPID is startCat that also returns the xterm's pid.
func startCatPID(t *testing.T, b *x11.Backend) (file string, win uint32, pid int) {
	t.Helper()
	harness.Require(t)
	file = filepath.Join(t.TempDir(), "typed.txt")
	ready := file + ".ready"
	// stty raw-ish: no echo processing changes bytes; cat writes what the tty delivers.
	script := "stty -ixon -echo; touch " + ready + "; exec cat > " + file
	l, err := b.Launch(t.Context(), x11.LaunchOptions{
		Name: "xterm", Args: []string{"-u8", "-title", t.Name(), "-e", "sh", "-c", script},
		Env: []string{"LANG=C.UTF-8", "LC_ALL=C.UTF-8"},
	})
	if err != nil || len(l.Windows) == 0 {
		t.Fatalf("Launch(xterm) = %+v, %v", l, err)
	}
	t.Cleanup(func() { _, _ = b.Kill(context.Background(), l.PID, time.Second) })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("xterm's shell did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	activate(t, b, l.Windows[0].ID)
	return file, l.Windows[0].ID, l.PID
}

// waitFile waits until FILE holds want (cat writes as the tty delivers), or fails.
func waitFile(t *testing.T, file, want string) {
	t.Helper()
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, _ = os.ReadFile(file)
		if string(got) == want {
			return
		}
	}
	t.Fatalf("file holds %q, want %q", got, want)
}

func TestTypeTextByteExact(t *testing.T) {
	b := open(t)
	before := harness.Command(t, "xmodmap", "-pke")
	_, symsBefore, err := b.KeyboardMapping()
	if err != nil {
		t.Fatal(err)
	}
	file, _ := startCat(t, b)
	text := "Grüße, 世界 → ✓ {[|]}\nThe quick brown fox: ~!@#$%^&*()_+`-=\\;',./<>?\"\tTAB end\n"
	st, err := b.Core().TypeText(t.Context(), text)
	if err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	if st.Remapped == 0 {
		t.Errorf("stats %+v: want remapped symbols", st)
	}
	// cat writes a line when the tty delivers it; end with a newline.
	waitFile(t, file, text)
	// xterm cannot say it has read the keys (no _NET_WM_PING): the remapped rows stay
	// while the backend lives and nothing needs their keycodes, and Close puts them back.
	if after := harness.Command(t, "xmodmap", "-pke"); after == before {
		t.Error("the remapped rows were put back while the backend is open and xterm may not have read them")
	}
	b.Close()
	after := harness.Command(t, "xmodmap", "-pke")
	if before != after {
		t.Errorf("keyboard mapping changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, symsAfter, _ := open(t).KeyboardMapping(); !slices.Equal(symsBefore, symsAfter) {
		t.Error("GetKeyboardMapping differs after TypeText")
	}
}

// TestTypeTextReachesALateClient: a client that handles the keys long after they were
// typed (stopped here; one busy starting up, as a GTK4 editor or Chromium is just after
// its window maps, reads them late too) still gets the characters typed through remapped
// keycodes: it reads the keyboard mapping only when it comes to the keys, and the rows
// stay remapped until then. Oracle: the file the xterm's cat writes.
func TestTypeTextReachesALateClient(t *testing.T) {
	// Well past RemapSettle: the client has not read one key yet.
	typeIntoStoppedXterm(t, "Grüße, Ωμέγα ✓\n", 4*x11.DefaultRemapSettle)
}

// TestTypeTextReachesAClientThatCannotSayItRead: xterm answers no _NET_WM_PING, so nothing
// tells when it has read keys typed through remapped keycodes; one that gets to them
// seconds later (stopped here; under metacity an xterm loading fallback fonts for the first
// non-Latin glyphs lagged past the second the rows used to stay) still gets the
// characters: the rows stay until a later call needs the keycodes, or Close. Oracle: the
// file the xterm's cat writes.
func TestTypeTextReachesAClientThatCannotSayItRead(t *testing.T) {
	// Well past the second the rows used to stay after keys nobody confirmed.
	typeIntoStoppedXterm(t, "déjà vu ΩΨ ✓\n", 2500*time.Millisecond)
}

// typeIntoStoppedXterm types text, which needs remapped keycodes, into an xterm whose
// process is stopped, lets it go on after stopped, and waits until its cat wrote text.
func typeIntoStoppedXterm(t *testing.T, text string, stopped time.Duration) {
	t.Helper()
	b := open(t)
	file, _, pid := startCatPID(t, b)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	if st, err := b.Core().TypeText(t.Context(), text); err != nil || st.Remapped == 0 {
		t.Fatalf("TypeText = %+v, %v; want remapped symbols", st, err)
	}
	time.Sleep(stopped)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFile(t, file, text)
}

// TestTypeTextKeepsAKeycodesMeaning: a long text is typed in chunks, each with its own
// look at the keymap. A client that reads keys late (stopped here; a terminal drawing
// glyphs from fallback fonts lags the same way) reads the first chunk's keys with the
// mapping of the moment it reads them: the second chunk must not give the keycodes the
// first one used other symbols. Here both chunks need é and Ω, the second also →, which
// would have taken the first chunk's keycode for é. Oracle: the file the xterm's cat writes.
func TestTypeTextKeepsAKeycodesMeaning(t *testing.T) {
	b := open(t)
	file, _, pid := startCatPID(t, b)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	first, second := "éΩ✓ab", "x→éΩy\n"
	for _, chunk := range []string{first, second} {
		if _, err := b.Core().TypeText(t.Context(), chunk); err != nil {
			t.Fatalf("TypeText(%q): %v", chunk, err)
		}
	}
	time.Sleep(4 * x11.DefaultRemapSettle)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFile(t, file, first+second)
}

func TestTypeTextManyMissingSymbolsBatches(t *testing.T) {
	b := open(t)
	file, _ := startCat(t, b)
	// More distinct missing symbols than Xvfb's spare keycodes hold at once (its empty
	// keycodes and the borrowable vendor-function ones, two symbols each).
	// Latin Extended-A and Cyrillic: none is on the default keymap, and the terminal's own
	// font draws them (thousands of CJK glyphs would have the server search its fonts).
	var text []rune
	for r := rune(0x100); r < 0x180; r++ {
		text = append(text, r)
	}
	for r := rune(0x410); r < 0x450; r++ {
		text = append(text, r)
	}
	for r := rune(0x3b1); r < 0x3ca; r++ {
		text = append(text, r)
	}
	want := string(text) + "\n"
	st, err := b.Core().TypeText(t.Context(), want)
	if err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	if st.Batches < 2 {
		t.Errorf("stats %+v: want several batches", st)
	}
	waitFile(t, file, want)
}

func TestPressKeyAndHotkeyInXterm(t *testing.T) {
	b := open(t)
	file, _ := startCat(t, b)
	steps := []string{"a", "shift+b", "Return", "ctrl+v", "Tab", "Return"}
	for _, s := range steps {
		kc, err := x11.ParseKeyCombo(s)
		if err != nil {
			t.Fatalf("ParseKeyCombo(%q): %v", s, err)
		}
		if err := b.Core().PressCombo(t.Context(), kc); err != nil {
			t.Fatalf("PressCombo(%q): %v", s, err)
		}
	}
	// ctrl+v makes the tty take the next character (Tab) literally.
	waitFile(t, file, "aB\n\t\n")
}

func TestHotkeyModifiersAroundKey(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	activate(t, b, xl.Window)
	xl.Reset()
	kc, err := x11.ParseKeyCombo("ctrl+shift+t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Core().PressCombo(t.Context(), kc); err != nil {
		t.Fatalf("PressCombo: %v", err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "key_release")) == 3
	})
	evs = harness.Filter(evs, "key_press", "key_release")
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+":"+x11.KeysymName(xprotoKeysym(e.Keysym)))
	}
	want := []string{"key_press:ctrl", "key_press:shift", "key_press:T", "key_release:T", "key_release:shift", "key_release:ctrl"}
	if !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	// The T press carries Control|Shift in its state.
	if evs[2].State&(1|4) != 5 {
		t.Errorf("state of t press = %#x, want Shift|Control", evs[2].State)
	}
	if b, k := b.Core().Held(); len(b)+len(k) != 0 {
		t.Errorf("Held() = %v, %v after PressCombo", b, k)
	}
}

func TestUnknownKey(t *testing.T) {
	for _, s := range []string{"ctrl+nosuchkey", "", "hyperdrive", "ctrl+"} {
		if _, err := x11.ParseKeyCombo(s); !errorsIs(err, x11.ErrUnknownKey) {
			t.Errorf("ParseKeyCombo(%q) = %v, want ErrUnknownKey", s, err)
		}
	}
}

func TestCancelReleasesEverything(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	p := x11.Point{X: w.Frame.X + 10, Y: w.Frame.Y + 10}
	err := b.Core().Drag(ctx, p, x11.Point{X: p.X + 100, Y: p.Y + 100}, x11.ButtonLeft, 100, 5*time.Second, []string{"shift"})
	if err == nil {
		t.Fatal("Drag with a short deadline succeeded")
	}
	if bs, ks := b.Core().Held(); len(bs)+len(ks) != 0 {
		t.Errorf("Held() = %v, %v after a cancelled drag", bs, ks)
	}
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_release")) == 1 && len(harness.Filter(evs, "key_release")) == 1
	})
	// And ButtonDown is undone by ReleaseAll.
	if err := b.Core().ButtonDown(t.Context(), p, x11.ButtonRight); err != nil {
		t.Fatal(err)
	}
	b.ReleaseAll(t.Context())
	xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_release")) == 2
	})
}

var _ = exec.Command

// TestTypeTextRepeatedKeyIsNoAutorepeat: a key typed twice in a row reaches clients as two
// presses whose release and next press carry different server timestamps. In one
// millisecond they would share one, which is how X reports autorepeat, and LibreOffice
// dropped the second 1 of "a11". Oracle: the timestamps xevlog logged.
func TestTypeTextRepeatedKeyIsNoAutorepeat(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	activate(t, b, xl.Window)
	xl.Reset()
	const text = "a11bbb"
	if _, err := b.Core().TypeText(t.Context(), text); err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "key_release")) == len(text)
	})
	evs = harness.Filter(evs, "key_press", "key_release")
	var typed string
	for i, e := range evs {
		if e.Type == "key_press" {
			typed += e.Char
			if i > 0 && evs[i-1].Type == "key_release" && evs[i-1].Keycode == e.Keycode && evs[i-1].Time == e.Time {
				t.Errorf("event %d: keycode %d released and pressed again at the same time %d", i, e.Keycode, e.Time)
			}
		}
	}
	if typed != text {
		t.Errorf("xevlog got %q, want %q", typed, text)
	}
}
