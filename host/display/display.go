package display

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure Start.
type Options struct {
	// Logger receives a debug line per spawned process; nil discards.
	Logger *slog.Logger
	// Width, Height and Depth of the screen; defaults 1280, 800, 24. A nested display
	// starts at Width×Height, or at what of it fits the person's work area (NestedSize),
	// and follows its window's size; its depth is the person's display's.
	Width, Height, Depth int
	// WindowManager starts openbox and waits until it manages the screen.
	WindowManager bool
	// LateWindowManager, with WindowManager, makes Start return once the X server (and the
	// session bus) accept connections and openbox has been started, without waiting for
	// openbox to manage the screen: WindowManagerReady waits for that. A caller starts
	// meanwhile what needs the X server only (the worker), and lets nothing map a window
	// before WindowManagerReady has returned.
	LateWindowManager bool
	// SessionBus starts a private dbus-daemon session bus.
	SessionBus bool
	// Path is the PATH used to find Xvfb (or Xephyr), openbox and dbus-daemon and given
	// to the children; empty means this process's PATH.
	Path string
	// Nested, when set, runs the display as a window on the person's display (Xephyr)
	// instead of a headless one (Xvfb): see NestedOptions.
	Nested *NestedOptions
}

// Display is a running private display. Close stops it.
type Display struct {
	log     *slog.Logger
	dir     string
	xauth   string
	num     int
	busAddr string
	env     []string // base environment for children
	// server names the X server's child ("Xvfb" or "Xephyr"); nested is set for a nested
	// display. Both are fixed before Start returns.
	server string
	nested *nested

	// mu guards procs.
	mu    sync.Mutex
	procs []*child // in start order

	// wmDone, set when the window manager was left starting (Options.LateWindowManager),
	// is closed once it is ready or failed, with wmErr saying which; wmStop ends the wait
	// when the display closes first.
	wmDone chan struct{}
	wmErr  error
	wmStop context.CancelFunc

	closeOnce sync.Once
}

// Start runs Xvfb on a free display number with a fresh cookie, then (as asked) openbox and
// a session bus. Readiness is observed, never slept for: Xvfb reports its display number
// through -displayfd once it accepts connections, openbox is ready when the root window has
// _NET_SUPPORTING_WM_CHECK, and dbus-daemon prints its address once it listens. On any
// failure everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *Display, err error) {
	if opts.Width == 0 {
		opts.Width = 1280
	}
	if opts.Height == 0 {
		opts.Height = 800
	}
	if opts.Depth == 0 {
		opts.Depth = 24
	}
	begin := time.Now()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	path := opts.Path
	if path == "" {
		path = os.Getenv("PATH")
	}
	// Old directories go while the server starts: a temporary directory holding hundreds
	// of them takes milliseconds to read.
	var sweep sync.WaitGroup
	defer sweep.Wait()
	sweep.Go(func() {
		if removed := removeAbandoned(os.TempDir()); len(removed) > 0 {
			logger.Info("removed the directories of displays whose owner is gone", "dirs", removed)
		}
	})
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("display: temp dir: %w", err)
	}
	d := &Display{log: logger, dir: dir, xauth: filepath.Join(dir, "Xauthority"), num: -1}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("display: %w", err)
	}
	if err := writeOwner(dir); err != nil {
		return nil, err
	}
	d.env = []string{"PATH=" + path, "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "XDG_RUNTIME_DIR=" + dir}
	if lang := os.Getenv("LANG"); lang != "" {
		d.env = append(d.env, "LANG="+lang)
	}
	cookie, err := newCookie()
	if err != nil {
		return nil, err
	}
	// The server accepts every cookie in its -auth file whatever the display number.
	if err := writeXauthority(d.xauth, cookie, -1); err != nil {
		return nil, err
	}
	if opts.Nested != nil {
		err = d.startNested(ctx, path, opts)
	} else {
		err = d.startServer(ctx, path, opts)
	}
	if err != nil {
		return nil, err
	}
	// Clients look the cookie up by display number.
	if err := writeXauthority(d.xauth, cookie, d.num); err != nil {
		return nil, err
	}
	d.env = append(d.env, "DISPLAY="+d.Name(), "XAUTHORITY="+d.xauth)
	if d.nested != nil {
		if err := d.nested.frame.startFollowing(ctx, d.num, d.xauth); err != nil {
			return nil, err
		}
	}
	if err := d.startDesktop(ctx, path, cookie, opts); err != nil {
		return nil, err
	}
	d.log.Debug("display started", "display", d.Name(), "server", d.server, "took", time.Since(begin).Round(time.Microsecond))
	return d, nil
}

// startDesktop starts the window manager and the session bus side by side, as asked: the
// window manager needs the X server alone, the bus nothing, and neither needs the other.
// The window manager's environment names the bus by the path it is about to listen on, so
// that what it starts finds the bus as every other program of the display does. It returns
// once both are ready, or the first failure once neither is starting any more; with
// opts.LateWindowManager, once the bus is ready and openbox started, leaving the wait for
// openbox to WindowManagerReady.
func (d *Display) startDesktop(ctx context.Context, path string, cookie []byte, opts Options) error {
	var wait func(context.Context) error
	if opts.WindowManager {
		env := slices.Clone(d.env)
		if opts.SessionBus {
			env = append(env, "DBUS_SESSION_BUS_ADDRESS="+d.busListenAddress())
		}
		var err error
		if wait, err = d.spawnWM(path, env, cookie); err != nil {
			return err
		}
	}
	if opts.WindowManager && opts.LateWindowManager {
		// The wait outlives Start's ctx, which may end when Start returns; Close ends it.
		wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		d.wmDone, d.wmStop = make(chan struct{}), stop
		late := wait
		go func() {
			defer close(d.wmDone)
			d.wmErr = late(wctx)
		}()
		wait = nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex // mu guards first
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel() // the other one stops waiting
	}
	var wg sync.WaitGroup
	if wait != nil {
		wg.Go(func() {
			if err := wait(ctx); err != nil {
				fail(err)
			}
		})
	}
	if opts.SessionBus {
		if err := d.startBus(ctx, path); err != nil {
			fail(err)
		}
	}
	wg.Wait()
	return first
}

// WindowManagerReady waits until the window manager a display started with
// Options.LateWindowManager manages the screen, and returns why it does not when it
// failed; it returns nil at once for a display that started without one or waited for it
// in Start.
func (d *Display) WindowManagerReady(ctx context.Context) error {
	if d.wmDone == nil {
		return nil
	}
	select {
	case <-d.wmDone:
		return d.wmErr
	case <-ctx.Done():
		return fmt.Errorf("display: waiting for the window manager: %w", ctx.Err())
	}
}

func lookPath(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("display: %s not found on PATH: %w", name, exec.ErrNotFound)
}

// ErrNotFound reports that a program Start needs is missing; it wraps exec.ErrNotFound.
var ErrNotFound = exec.ErrNotFound

func (d *Display) startServer(ctx context.Context, path string, opts Options) error {
	bin, err := lookPath(path, "Xvfb")
	if err != nil {
		return err
	}
	args := []string{"-displayfd", "3", "-screen", "0",
		fmt.Sprintf("%dx%dx%d", opts.Width, opts.Height, opts.Depth),
		"-nolisten", "tcp", "-auth", d.xauth, "-noreset"}
	_, err = d.runServer(ctx, "Xvfb", bin, args, d.env)
	return err
}

// runServer starts the X server bin (name Xvfb or Xephyr) with args, which must include
// "-displayfd 3", and waits until it writes its display number there: it then accepts
// connections.
func (d *Display) runServer(ctx context.Context, name, bin string, args, env []string) (*child, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("display: pipe: %w", err)
	}
	defer r.Close()
	begin := time.Now()
	c, err := d.spawn(name, bin, args, env, []*os.File{w})
	w.Close()
	if err != nil {
		return nil, err
	}
	d.server = name
	type res struct {
		n   int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			ch <- res{-1, fmt.Errorf("display: %s exited before it was ready: %s", name, c.stderrTail())}
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(line))
		ch <- res{n, err}
	}()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case rs := <-ch:
		if rs.err != nil {
			return nil, rs.err
		}
		d.num = rs.n
	case <-tctx.Done():
		r.Close() // unblocks the reader
		<-ch
		return nil, fmt.Errorf("display: %s not ready: %w", name, tctx.Err())
	}
	d.log.Debug("display ready", "display", d.Name(), "server", name, "pid", c.pid(), "took", time.Since(begin).Round(time.Microsecond))
	return c, nil
}

// spawnWM starts openbox with env and returns the wait until it has finished starting.
// openbox runs its --startup command once it has taken the screen and handles MapRequests;
// a window mapped before that (when only _NET_SUPPORTING_WM_CHECK is set) was seen to stay
// unmanaged and unmapped. The command creates a file in the display's directory, which is
// watched (inotify) rather than polled; then the root window must name the window manager.
func (d *Display) spawnWM(path string, env []string, cookie []byte) (wait func(context.Context) error, err error) {
	bin, err := lookPath(path, "openbox")
	if err != nil {
		return nil, err
	}
	touch, err := lookPath(path, "touch")
	if err != nil {
		return nil, err
	}
	const readyName = "wm-ready"
	ready, stopWatch, err := watchCreated(d.dir, readyName)
	if err != nil {
		return nil, fmt.Errorf("display: %w", err)
	}
	begin := time.Now()
	c, err := d.spawn("openbox", bin, []string{"--sm-disable", "--startup", touch + " " + filepath.Join(d.dir, readyName)}, env, nil)
	if err != nil {
		stopWatch()
		return nil, err
	}
	return func(ctx context.Context) error {
		defer stopWatch()
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		select {
		case <-ready:
		case <-c.done:
			return fmt.Errorf("display: openbox exited: %s", c.stderrTail())
		case <-tctx.Done():
			return fmt.Errorf("display: openbox not ready: %w", tctx.Err())
		}
		x, err := dialX(tctx, d.num, cookie)
		if err != nil {
			return fmt.Errorf("display: %w", err)
		}
		defer x.Close()
		atom, err := x.internAtom("_NET_SUPPORTING_WM_CHECK")
		if err != nil {
			return fmt.Errorf("display: %w", err)
		}
		var check uint32
		if atom != 0 {
			if check, _, err = x.rootProperty32(atom); err != nil {
				return fmt.Errorf("display: %w", err)
			}
		}
		if check == 0 {
			return errors.New("display: openbox ran its start-up command but the root window has no _NET_SUPPORTING_WM_CHECK")
		}
		d.log.Debug("window manager ready", "pid", c.pid(), "took", time.Since(begin).Round(time.Microsecond))
		return nil
	}, nil
}

// busListenAddress is the address the session bus listens on; the address it prints once
// it listens adds its guid.
func (d *Display) busListenAddress() string { return "unix:path=" + filepath.Join(d.dir, "bus") }

func (d *Display) startBus(ctx context.Context, path string) error {
	bin, err := lookPath(path, "dbus-daemon")
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("display: pipe: %w", err)
	}
	defer r.Close()
	args := []string{"--session", "--nofork", "--nopidfile", "--print-address=3", "--address=" + d.busListenAddress()}
	begin := time.Now()
	c, err := d.spawn("dbus-daemon", bin, args, d.env, []*os.File{w})
	w.Close()
	if err != nil {
		return err
	}
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case addr := <-ch:
		if addr == "" {
			return fmt.Errorf("display: dbus-daemon exited before it was ready: %s", c.stderrTail())
		}
		d.busAddr = addr
	case <-tctx.Done():
		r.Close()
		<-ch
		return fmt.Errorf("display: dbus-daemon not ready: %w", tctx.Err())
	}
	d.env = append(d.env, "DBUS_SESSION_BUS_ADDRESS="+d.busAddr)
	d.log.Debug("session bus ready", "address", d.busAddr, "pid", c.pid(), "took", time.Since(begin).Round(time.Microsecond))
	return nil
}

// Name returns the display name, e.g. ":3".
func (d *Display) Name() string { return ":" + strconv.Itoa(d.num) }

// Number returns the display number.
func (d *Display) Number() int { return d.num }

// XAuthority returns the path of the private Xauthority file.
func (d *Display) XAuthority() string { return d.xauth }

// Env returns DISPLAY, XAUTHORITY and (with a session bus) DBUS_SESSION_BUS_ADDRESS, as
// "KEY=value" strings for a child's environment.
func (d *Display) Env() []string {
	env := []string{"DISPLAY=" + d.Name(), "XAUTHORITY=" + d.xauth}
	if d.busAddr != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+d.busAddr)
	}
	return env
}

// ServerPID returns the X server's pid.
func (d *Display) ServerPID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.procs {
		if c.name == d.server {
			return c.pid()
		}
	}
	return 0
}

// PIDs returns every process this display started (server, window manager, bus); they
// must never be targeted by tools.
func (d *Display) PIDs() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]int, 0, len(d.procs))
	for _, c := range d.procs {
		out = append(out, c.pid())
	}
	return out
}

// Close stops every process (newest first: SIGTERM to its group, SIGKILL after a grace
// period), reaps them and removes the private directory. It is idempotent.
func (d *Display) Close() error {
	var errs []error
	d.closeOnce.Do(func() {
		d.mu.Lock()
		procs := d.procs
		d.mu.Unlock()
		if d.wmStop != nil {
			d.wmStop()
			<-d.wmDone
		}
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop(2 * time.Second)
			d.log.Debug("stopped", "name", procs[i].name, "pid", procs[i].pid())
		}
		if pid := d.ServerPID(); pid != 0 && d.num >= 0 {
			removeServerFiles(d.num, pid)
		}
		if d.nested != nil && d.nested.frame != nil {
			// The window on the person's display goes with the connection that made it.
			d.nested.frame.close(d.nested.started)
		}
		if err := os.RemoveAll(d.dir); err != nil {
			errs = append(errs, fmt.Errorf("display: remove %s: %w", d.dir, err))
		}
	})
	return errors.Join(errs...)
}

// removeServerFiles removes the socket and lock file of display num when the lock file
// still names serverPID, the server this Display started and has stopped: a server killed
// before it could clean up leaves them, and the next server would avoid the number. A
// number another server has taken since is left alone.
func removeServerFiles(num, serverPID int) {
	lock := "/tmp/.X" + strconv.Itoa(num) + "-lock"
	b, err := os.ReadFile(lock)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || pid != serverPID {
		return
	}
	_ = os.Remove("/tmp/.X11-unix/X" + strconv.Itoa(num))
	_ = os.Remove(lock)
}
