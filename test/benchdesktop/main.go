// Command benchdesktop compares the x11 backend with the usual command-line tools on a
// private display, side by side, and prints medians and ratios:
//
//   - click: call → ButtonRelease seen by xevlog, vs `xdotool mousemove … click 1`;
//   - type_text of 200 characters into `xterm -e cat > FILE`: time until FILE is exact,
//     vs `xdotool type` (default delay), with the share of characters that arrived in order;
//   - capture of the 1280×800 root to PNG vs `import -window root png:-` and `xwd -root`;
//   - capture of a 1920×1080 root downscaled to 1280 vs `import -window root -resize 1280x`.
//
// scripts/bench-desktop.sh builds and runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/x11"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchdesktop:", err)
		os.Exit(1)
	}
}

// inputPath is one way input reaches a window: its devices and what readies the window.
type inputPath struct {
	name    string
	dev     *x11.Devices
	prepare func(win uint32) error
}

type row struct {
	op, ours, ref string
	oursD, refD   time.Duration
	note          string
}

var (
	xevlogPath = flag.String("xevlog", "", "path of the xevlog binary (required)")
	iters      = flag.Int("n", 30, "iterations for click and capture")
	typeRuns   = flag.Int("type-runs", 3, "runs for type_text")
)

func run() error {
	flag.Parse()
	if *xevlogPath == "" {
		return fmt.Errorf("-xevlog is required")
	}
	ctx := context.Background()
	var rows []row

	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		return err
	}
	defer d.Close()
	for _, kv := range d.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	b, err := x11.Open(ctx, x11.Options{})
	if err != nil {
		return err
	}
	defer b.Close()

	seat, err := b.OpenSeat(ctx, "bench")
	if err != nil {
		return fmt.Errorf("session devices: %w", err)
	}
	defer seat.Close(context.Background())
	fg := inputPath{name: "foreground (core XTEST)", dev: b.Core(), prepare: func(win uint32) error {
		_, _, err := b.Activate(ctx, win)
		return err
	}}
	bg := inputPath{name: "background (session XI2 pair)", dev: seat.Devices(), prepare: func(win uint32) error {
		if err := seat.Adopt(ctx, win); err != nil {
			return err
		}
		return seat.Focus(ctx, win)
	}}
	for _, p := range []inputPath{fg, bg} {
		r, err := benchClick(ctx, b, p)
		if err != nil {
			return fmt.Errorf("click: %w", err)
		}
		rows = append(rows, r)
	}
	for _, tt := range []struct{ label, text string }{
		{"type_text 200 ASCII chars → file", asciiText},
		{"type_text 200 mixed chars → file", typeText},
	} {
		for _, p := range []inputPath{fg, bg} {
			tr, err := benchType(ctx, b, p, tt.label, tt.text)
			if err != nil {
				return fmt.Errorf("type: %w", err)
			}
			rows = append(rows, tr)
		}
	}
	rows = append(rows, benchCapture(ctx, b, "capture 1280×800 root → PNG", -1,
		[][]string{{"import", "-window", "root", "png:-"}, {"xwd", "-root", "-silent"}})...)

	d2, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1920, Height: 1080})
	if err != nil {
		return err
	}
	defer d2.Close()
	for _, kv := range d2.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	b2, err := x11.Open(ctx, x11.Options{})
	if err != nil {
		return err
	}
	defer b2.Close()
	rows = append(rows, benchCapture(ctx, b2, "capture 1920×1080 → 1280 PNG", 1280,
		[][]string{{"import", "-window", "root", "-resize", "1280x", "png:-"}})...)

	fmt.Printf("%-32s %-28s %12s   %-34s %12s %8s  %s\n", "operation", "ours", "median", "reference", "median", "ratio", "note")
	for _, r := range rows {
		ratio := "-"
		if r.oursD > 0 && r.refD > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(r.refD)/float64(r.oursD))
		}
		fmt.Printf("%-32s %-28s %12s   %-34s %12s %8s  %s\n", r.op, r.ours, round(r.oursD), r.ref, round(r.refD), ratio, r.note)
	}
	fmt.Println()
	foreground := map[string]time.Duration{}
	for _, r := range rows {
		switch r.ours {
		case fg.name:
			foreground[r.op] = r.oursD
		case bg.name:
			if f := foreground[r.op]; f > 0 && r.oursD > 0 {
				fmt.Printf("%-32s background ÷ foreground (p50): %.2f×\n", r.op, float64(r.oursD)/float64(f))
			}
		}
	}
	return nil
}

func round(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(10 * time.Microsecond).String()
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// xevlog runs the oracle and streams its button releases.
type xevlog struct {
	cmd      *exec.Cmd
	window   uint32
	releases chan struct{}
}

func startXevlog() (*xevlog, error) {
	cmd := exec.Command(*xevlogPath, "-title", "bench", "-width", "400", "-height", "300")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	x := &xevlog{cmd: cmd, releases: make(chan struct{}, 1024)}
	ready := make(chan uint32, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Window uint32 `json:"window"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			switch ev.Type {
			case "ready":
				ready <- ev.Window
			case "button_release":
				x.releases <- struct{}{}
			}
		}
		close(x.releases)
	}()
	select {
	case x.window = <-ready:
		return x, nil
	case <-time.After(10 * time.Second):
		x.stop()
		return nil, fmt.Errorf("xevlog did not map its window")
	}
}

func (x *xevlog) stop() {
	_ = x.cmd.Process.Kill()
	_ = x.cmd.Wait()
	for range x.releases {
	}
}

func (x *xevlog) waitRelease() error {
	select {
	case _, ok := <-x.releases:
		if !ok {
			return fmt.Errorf("xevlog exited")
		}
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("no ButtonRelease within 5s")
	}
}

func benchClick(ctx context.Context, b *x11.Backend, path inputPath) (row, error) {
	x, err := startXevlog()
	if err != nil {
		return row{}, err
	}
	defer x.stop()
	w, err := b.Window(ctx, x.window)
	for i := 0; err != nil && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		w, err = b.Window(ctx, x.window)
	}
	if err != nil {
		return row{}, err
	}
	if err := path.prepare(w.ID); err != nil {
		return row{}, err
	}
	p := x11.Point{X: w.Frame.X + 100, Y: w.Frame.Y + 100}
	var ours, ref []time.Duration
	for range *iters {
		t0 := time.Now()
		if err := path.dev.Click(ctx, p, x11.ButtonLeft, 1, nil); err != nil {
			return row{}, err
		}
		if err := x.waitRelease(); err != nil {
			return row{}, err
		}
		ours = append(ours, time.Since(t0))
	}
	for range *iters {
		t0 := time.Now()
		if err := exec.Command("xdotool", "mousemove", fmt.Sprint(p.X), fmt.Sprint(p.Y), "click", "1").Run(); err != nil {
			return row{}, err
		}
		if err := x.waitRelease(); err != nil {
			return row{}, err
		}
		ref = append(ref, time.Since(t0))
	}
	return row{op: "click → ButtonRelease", ours: path.name, ref: "xdotool mousemove click 1",
		oursD: median(ours), refD: median(ref), note: fmt.Sprintf("n=%d", *iters)}, nil
}

const typeText = "Grüße, 世界 → ✓ {[|]} The quick brown fox jumps over the lazy dog: 0123456789 ~!@#$%^&*()_+ " +
	"Ünïcödé ñ ß € £ ¥ — “quotes” ‘single’ … αβγδε ΑΒΓ жизнь 日本語テキスト 한국어 ☃★♥ ok; END"

// asciiText is printable ASCII only: every character is on the default keymap, so no
// keycode is remapped.
const asciiText = "The quick brown fox jumps over the lazy dog; 0123456789 ~!@#$%^&*()_+ {[|]} <>?/ " +
	"Pack my box with five dozen liquor jugs. SPHINX OF BLACK QUARTZ, JUDGE MY VOW! 'x' \"y\" `z` =-"

func benchType(ctx context.Context, b *x11.Backend, path inputPath, label, typeText string) (row, error) {
	text := []rune(typeText)
	if len(text) > 200 {
		text = text[:200]
	}
	for len(text) < 200 {
		text = append(text, 'x')
	}
	want := string(text) + "\n"
	var ours, ref []time.Duration
	oursExact, refShare := 0, 0.0
	for range *typeRuns {
		d, got, err := typeOnce(ctx, b, path.prepare, func() error {
			_, err := path.dev.TypeText(ctx, want)
			return err
		}, want)
		if err != nil {
			return row{}, err
		}
		ours = append(ours, d)
		if got == want {
			oursExact++
		} else {
			fmt.Fprintf(os.Stderr, "%s, %s: typed %q\n  want %q\n", label, path.name, got, want)
		}
		d, got, err = typeOnce(ctx, b, fg(b), func() error {
			return exec.Command("xdotool", "type", "--", want).Run()
		}, want)
		if err != nil {
			return row{}, err
		}
		ref = append(ref, d)
		refShare += inOrderShare(want, got)
	}
	return row{op: label, ours: path.name, ref: "xdotool type (12 ms delay)",
		oursD: median(ours), refD: median(ref),
		note: fmt.Sprintf("exact %d/%d runs; xdotool %.0f%% chars in order", oursExact, *typeRuns, 100*refShare/float64(*typeRuns))}, nil
}

// fg readies a window for core input: it activates it.
func fg(b *x11.Backend) func(uint32) error {
	return func(win uint32) error {
		_, _, err := b.Activate(context.Background(), win)
		return err
	}
}

// typeOnce starts a fresh xterm running cat > FILE, readies its window with prepare, types
// with f, and returns the time until FILE holds a full line (or 15 s passed) and what it
// holds.
func typeOnce(ctx context.Context, b *x11.Backend, prepare func(uint32) error, f func() error, want string) (time.Duration, string, error) {
	dir, err := os.MkdirTemp("", "bench-type-")
	if err != nil {
		return 0, "", err
	}
	defer os.RemoveAll(dir)
	file, ready := filepath.Join(dir, "out"), filepath.Join(dir, "ready")
	l, err := b.Launch(ctx, x11.LaunchOptions{Name: "xterm",
		Args: []string{"-u8", "-e", "sh", "-c", "stty -ixon -echo; touch " + ready + "; exec cat > " + file},
		Env:  []string{"LANG=C.UTF-8", "LC_ALL=C.UTF-8"}})
	if err != nil || len(l.Windows) == 0 {
		return 0, "", fmt.Errorf("launch xterm: %v %+v", err, l)
	}
	defer func() { _, _ = b.Kill(ctx, l.PID, time.Second) }()
	for i := 0; ; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if i > 1000 {
			return 0, "", fmt.Errorf("xterm shell did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := prepare(l.Windows[0].ID); err != nil {
		return 0, "", err
	}
	t0 := time.Now()
	if err := f(); err != nil {
		return 0, "", err
	}
	deadline := t0.Add(15 * time.Second)
	for {
		got, _ := os.ReadFile(file)
		if strings.HasSuffix(string(got), "\n") || time.Now().After(deadline) {
			return time.Since(t0), string(got), nil
		}
		time.Sleep(time.Millisecond)
	}
}

// inOrderShare is the longest common subsequence of want and got over len(want), in runes.
func inOrderShare(want, got string) float64 {
	a, b := []rune(want), []rune(got)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(b)]) / float64(len(a))
}

func benchCapture(ctx context.Context, b *x11.Backend, op string, maxDim int, refs [][]string) []row {
	var ours []time.Duration
	var size int
	var img *x11.Image
	for range *iters {
		t0 := time.Now()
		var err error
		img, err = b.Capture(ctx, x11.CaptureOptions{MaxDimension: maxDim})
		if err != nil {
			return []row{{op: op, note: err.Error()}}
		}
		ours = append(ours, time.Since(t0))
		size = len(img.Data)
	}
	var rows []row
	for _, ref := range refs {
		var refD []time.Duration
		n := max(3, *iters/6)
		for range n {
			t0 := time.Now()
			if err := exec.Command(ref[0], ref[1:]...).Run(); err != nil {
				rows = append(rows, row{op: op, ref: strings.Join(ref, " "), note: err.Error()})
				break
			}
			refD = append(refD, time.Since(t0))
		}
		rows = append(rows, row{op: op, ours: fmt.Sprintf("x11.Capture (%s)", img.Route), ref: strings.Join(ref, " "),
			oursD: median(ours), refD: median(refD),
			note: fmt.Sprintf("%dx%d scale %.3g, %d KiB; n=%d/%d", img.Width, img.Height, img.Scale, size/1024, *iters, n)})
	}
	return rows
}
