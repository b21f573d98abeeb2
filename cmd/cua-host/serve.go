package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/serve"
	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/proto/contract"
)

// runServe is `cua-host serve`: flags and wiring around package serve. The control stream
// is stdin/stdout; logs go to stderr or --log-file. Exit 0 after a normal end, 1 when the
// host could not run, 2 on a usage error.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lf := addLogFlags(fs)
	runtimeDir := fs.String("runtime-dir", "", "where the 0700 endpoint directory is created (default $XDG_RUNTIME_DIR, else the temporary directory)")
	modes := fs.String("allow-modes", "standard,bounded", "permission modes sessions may have (comma-separated; unrestricted needs --dangerously-bypass-approvals)")
	bypass := fs.Bool("dangerously-bypass-approvals", false, "let sessions be created in mode unrestricted")
	maxTTL := fs.Duration("max-session-ttl", 24*time.Hour, "longest session lifetime")
	maxIdle := fs.Duration("max-idle-ttl", time.Hour, "longest session idle timeout")
	consentTimeout := fs.Duration("consent-timeout", 60*time.Second, "how long a consent_request waits for consent_decision before it is a deny")
	callTimeout := fs.Duration("call-timeout", 0, "deadline of each tool call at the endpoints (default 2m)")
	screen := fs.String("screen", "", "size of private displays, WxH (default 1280x800)")
	policyPath := fs.String("policy", "", "user policy file or Rego directory (default $"+policy.EnvPolicyFile+")")
	managedPolicy := fs.String("managed-policy", "", "managed policy file or Rego directory (default $"+policy.EnvManagedPolicyFile+")")
	keep := fs.Bool("keep-after-eof", false, "keep running after end-of-file on stdin until the last session ends or SIGTERM (what `cua-host session start` uses)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "cua-host serve: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	lvl, err := lf.parseLevel()
	if err != nil {
		return fail("%v", err)
	}
	ceiling := authz.Ceiling{MaxSessionTTL: *maxTTL, MaxIdleTTL: *maxIdle}
	for _, m := range strings.Split(*modes, ",") {
		mode, err := authz.ParseMode(strings.TrimSpace(m))
		if err != nil {
			return fail("--allow-modes: %v", err)
		}
		ceiling.AllowedModes = append(ceiling.AllowedModes, mode)
		if mode == authz.Unrestricted {
			if !*bypass {
				return fail("--allow-modes unrestricted needs --dangerously-bypass-approvals")
			}
			disabled, err := unrestrictedDisabled(os.Getenv)
			if err != nil {
				return fail("%v", err)
			}
			if disabled {
				return fail("%s", errUnrestrictedDisable)
			}
			ceiling.UnrestrictedAcknowledged = true
		}
	}
	if err := ceiling.Validate(); err != nil {
		return fail("%v", err)
	}
	var w, h int
	if *screen != "" {
		var err error
		if w, h, err = parseScreen(*screen); err != nil {
			return fail("%v", err)
		}
	}
	managedP, userP, err := policy.ResolvePaths(*managedPolicy, *policyPath, os.Getenv)
	if err != nil {
		return fail("policy: %v", err)
	}
	set, err := policy.LoadLayers(managedP, userP)
	if err != nil {
		return fail("policy: %v", err)
	}
	logOut, log, closeLog, err := lf.open(stderr, lvl, "serve")
	if err != nil {
		return fail("%v", err)
	}
	defer closeLog()

	// The app going away closes our stdout and stderr too: supervise keeps SIGPIPE from
	// killing us before everything is torn down.
	ctx, stop := supervise(ctx, log)
	defer stop()
	if !*keep {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stopWatch, err := watchParent(cancel, log)
		if err != nil {
			log.Warn("cannot watch for the app's death; end-of-file on stdin still ends everything", "err", err)
		} else {
			defer stopWatch()
		}
	}

	srv, err := serve.New(serve.Options{
		Logger:           log,
		WorkerLogLevel:   lvl,
		LogOut:           logOut,
		RuntimeDir:       *runtimeDir,
		Ceiling:          ceiling,
		Policy:           set,
		ConsentTimeout:   *consentTimeout,
		CallTimeout:      *callTimeout,
		Width:            w,
		Height:           h,
		ProtectAncestors: true,
		JanitorArgs:      []string{contract.JanitorSubcommand},
		KeepAfterEOF:     *keep,
	})
	if err != nil {
		log.Error("cua-host serve", "err", err)
		return 1
	}
	log.Info("serving the control stream on stdin/stdout", "endpoint_dir", srv.Dir(), "pid", os.Getpid())
	err = srv.Run(ctx, os.Stdin, stdout)
	if n := host.KillOrphans(orphanBudget, log); n > 0 {
		log.Info("killed orphaned descendants", "count", n)
	}
	if err != nil {
		log.Error("cua-host serve stopped", "err", err)
		return 1
	}
	return 0
}

// watchParent cancels when the process that started us dies, even by SIGKILL, as a second
// signal beside end-of-file on stdin (which another holder of the pipe could delay). The
// kernel sends the parent-death signal when the thread that forked us exits, which may
// happen while the parent lives on (pitfalls: Pdeathsig belongs to a thread), so the signal
// only counts when our parent changed.
func watchParent(cancel context.CancelFunc, log *slog.Logger) (func(), error) {
	ppid := os.Getppid()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR2)
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR2), 0, 0, 0); err != nil {
		signal.Stop(sigs)
		return nil, err
	}
	done := make(chan struct{})
	check := func() bool {
		if os.Getppid() != ppid {
			log.Info("the app that started us is gone; stopping", "ppid", ppid)
			cancel()
			return true
		}
		return false
	}
	if check() { // it died before the signal was armed
		signal.Stop(sigs)
		return func() {}, nil
	}
	go func() {
		for {
			select {
			case <-sigs:
				if check() {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(sigs); close(done) }, nil
}
