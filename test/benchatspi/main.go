// Command benchatspi measures get_window_state on real GTK windows on a private display
// (Xvfb, openbox, a private session bus and its accessibility bus, all started and
// stopped here): a zenity entry dialog and a zenity list of -rows rows. For each it prints
// the median walk time and call time over -n calls, and the size of what an agent
// receives: text bytes, structured-content bytes, image bytes, and token estimates
// (text ≈ bytes/4; an image ≈ width×height/750), with and without the screenshot.
//
// scripts/bench-a11y.sh builds and runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

var (
	iters = flag.Int("n", 30, "calls per measurement")
	rows  = flag.Int("rows", 1000, "rows of the list")
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchatspi:", err)
		os.Exit(1)
	}
}

func run() error {
	flag.Parse()
	ctx := context.Background()
	d, err := display.Start(ctx, display.Options{WindowManager: true, SessionBus: true, Width: 1280, Height: 800})
	if err != nil {
		return err
	}
	defer d.Close()
	for _, kv := range d.Env() { // DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	b, err := x11.Open(ctx, x11.Options{Display: d.Name()})
	if err != nil {
		return err
	}
	defer b.Close()
	c := atspi.New(atspi.Options{SessionBusAddress: os.Getenv("DBUS_SESSION_BUS_ADDRESS")})
	defer c.Close()
	reg := tool.NewRegistry()
	desktop.Register(reg, b, desktop.Options{Accessibility: c})
	sess := tool.NewSession("bench", "unrestricted")

	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_AT_BRIDGE=0", "GTK_A11Y=atspi"}, d.Env()...)
	listArgs := []string{"--list", "--title", "Big list", "--column=x", "--width", "320", "--height", "480"}
	for i := range *rows {
		listArgs = append(listArgs, "row "+strconv.Itoa(i))
	}
	cases := []struct {
		name string
		args []string
		opts map[string]any
	}{
		{"zenity --entry", []string{"--entry", "--title", "CUA probe", "--text", "Type here:"}, nil},
		{fmt.Sprintf("zenity --list (%d rows)", *rows), listArgs, nil},
		{fmt.Sprintf("zenity --list (%d rows), max_elements=5000", *rows), listArgs, map[string]any{"max_elements": 5000, "timeout_ms": 10000}},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "window\tscreenshot\twalk ms (median)\tcall ms (median)\telements\ttruncated\ttext B\ttext tok\tstructured B\tstructured tok\timage B\timage tok\ttotal tok\t\n")
	for _, tc := range cases {
		app, err := start(ctx, b, env, tc.args)
		if err != nil {
			return err
		}
		for _, shot := range []bool{false, true} {
			args := map[string]any{"pid": app.pid, "window_id": app.window, "include_screenshot": shot}
			for k, v := range tc.opts {
				args[k] = v
			}
			m, err := measure(ctx, reg, sess, args)
			if err != nil {
				app.stop()
				return fmt.Errorf("%s: %w", tc.name, err)
			}
			fmt.Fprintf(tw, "%s\t%v\t%.1f\t%.1f\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", tc.name, shot, m.walkMS, m.callMS, m.elements, m.truncated,
				m.textB, m.textB/4, m.structB, m.structB/4, m.imageB, m.imageTok, m.textB/4+m.structB/4+m.imageTok)
		}
		app.stop()
	}
	tw.Flush()
	fmt.Println("\ntext tok ≈ text bytes/4; structured tok ≈ JSON bytes/4 (clients that forward structuredContent); image tok ≈ w×h/750.")
	fmt.Println("Goals for the dialog: walk ≤ 50 ms, text ≤ 2 KB.")
	return nil
}

type app struct {
	cmd    *exec.Cmd
	pid    int
	window uint32
	done   chan struct{}
}

func (a *app) stop() {
	_ = syscall.Kill(-a.pid, syscall.SIGKILL)
	<-a.done
}

// start runs zenity and waits for its window.
func start(ctx context.Context, b *x11.Backend, env, args []string) (*app, error) {
	cmd := exec.Command("zenity", args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &app{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(a.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		wins, err := b.Windows(ctx)
		if err == nil {
			for _, w := range wins {
				if w.PID == a.pid && w.Mapped {
					a.window = w.ID
					return a, nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.stop()
	return nil, fmt.Errorf("zenity %v showed no window", args[:2])
}

type measurement struct {
	walkMS, callMS                   float64
	elements                         int
	truncated                        string
	textB, structB, imageB, imageTok int
}

// measure waits until the window's tree is there, then calls get_window_state n times.
func measure(ctx context.Context, reg *tool.Registry, sess *tool.Session, args map[string]any) (measurement, error) {
	tl, _ := reg.Lookup("get_window_state")
	raw, _ := json.Marshal(args)
	call := func() (*tool.Result, map[string]any, time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		t0 := time.Now()
		r, err := tl.Handler(cctx, &tool.Call{Name: "get_window_state", JSON: raw, Session: sess})
		took := time.Since(t0)
		if err != nil {
			return nil, nil, 0, err
		}
		b, _ := json.Marshal(r.Structured)
		var st map[string]any
		_ = json.Unmarshal(b, &st)
		return r, st, took, nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, st, _, err := call()
		if err != nil {
			return measurement{}, err
		}
		if st["degraded"] != true {
			break
		}
		if time.Now().After(deadline) {
			return measurement{}, fmt.Errorf("still degraded: %v", st["degraded_reason"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	var walks, calls []float64
	var m measurement
	for range *iters {
		r, st, took, err := call()
		if err != nil {
			return m, err
		}
		walks = append(walks, st["walk_ms"].(float64))
		calls = append(calls, float64(took.Microseconds())/1000)
		sb, _ := json.Marshal(r.Structured)
		m.textB, m.structB, m.imageB, m.imageTok = len(r.Content[0].Text), len(sb), 0, 0
		if len(r.Content) > 1 {
			m.imageB = len(r.Content[1].Image)
			w, _ := st["screenshot_width"].(float64)
			h, _ := st["screenshot_height"].(float64)
			m.imageTok = int(w * h / 750)
		}
		m.elements = int(st["element_count"].(float64))
		m.truncated = "no"
		if st["truncated"] == true {
			m.truncated = fmt.Sprint(st["truncation_reason"])
		}
	}
	m.walkMS, m.callMS = median(walks), median(calls)
	return m, nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
