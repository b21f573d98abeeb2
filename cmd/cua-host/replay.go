package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/journal/replay"
	"github.com/cua-host/cua-host/policy"
)

// runReplay is `cua-host replay DIR`: it re-runs a journal's completed actions on a
// display under the modes and manifests its sessions had, and reports each step. Exit 0
// when every step ran and completed, 1 when the replay stopped at a step (or the worker
// did not start), 2 when the journal is refused (it does not verify, or a step's arguments
// were redacted) or on a usage error.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	display := fs.String("display", "private", "X display to replay on: private (a fresh one), nested (a fresh one in a window on $DISPLAY, to watch), auto, shared or :N")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	stepTimeout := fs.Duration("step-timeout", 60*time.Second, "deadline for each step")
	maxWait := fs.Duration("max-wait", 2*time.Second, "keep the original pause before each step, up to this long (0: none)")
	hold := fs.Duration("hold", 2*time.Second, "keep the display and the launched applications this long after the last step")
	bypass := fs.Bool("dangerously-bypass-approvals", false, "allow replaying sessions that ran in mode unrestricted")
	policyPath := fs.String("policy", "", "user policy file (default $CUA_HOST_POLICY or the user's config)")
	managedPolicy := fs.String("managed-policy", "", "managed policy file (default the system's)")
	logLevel := fs.String("log-level", "warn", "log level for stderr: debug, info, warn, error")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host replay DIR [--display private|nested|auto|shared|:N] [--json] [--max-wait D] [--hold D] [--step-timeout D]")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "cua-host replay: bad --log-level: %v\n", err)
		return 2
	}
	mode, why, err := resolveDisplay(*display, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: %v\n", err)
		return 2
	}
	if mode != "private" && mode != "nested" && (len(mode) < 2 || mode[0] != ':') {
		fmt.Fprintf(stderr, "cua-host replay: --display %q: want private, nested, auto, shared or :N\n", *display)
		return 2
	}
	plan, err := replay.Load(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: %v\n", err)
		return 2
	}
	ceiling, err := replayCeiling(plan, *bypass, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: %v\n", err)
		return 2
	}
	managedPath, userPath, err := policy.ResolvePaths(*managedPolicy, *policyPath, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: policy: %v\n", err)
		return 2
	}
	set, err := policy.LoadLayers(managedPath, userPath)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: policy: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	if err := host.BecomeSubreaper(); err != nil {
		log.Warn("cannot become a subreaper; orphaned applications go to init", "err", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	if why != "" {
		log.Warn("no nested display", "why", why)
	}
	disp, err := openDisplay(ctx, mode, log)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: %v\n", err)
		return 1
	}
	defer func() {
		disp.Close()
		host.KillOrphans(orphanBudget, log)
	}()
	opts := replay.Options{
		Host: host.Options{
			Logger: log, WorkerLogLevel: lvl, Env: disp.env, Display: disp.facts, ProtectedPIDs: disp.pids,
			ProtectAncestors: true, Ceiling: ceiling, Policy: set,
		},
		StepTimeout: *stepTimeout,
		MaxWait:     *maxWait,
		Hold:        *hold,
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "replaying %d step(s) of %s on %s\n", len(plan.Steps), pos[0], disp.facts.Name)
		opts.OnStep = func(s replay.Step) { fmt.Fprintln(stdout, stepLine(s)) }
	}
	rep, err := replay.Run(ctx, plan, opts)
	if err != nil {
		fmt.Fprintf(stderr, "cua-host replay: %v\n", err)
		return 1
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else if rep.OK() {
		fmt.Fprintf(stdout, "replayed: %d step(s) ran, all completed\n", rep.Ran)
	} else {
		fmt.Fprintf(stdout, "stopped at step %d: %d step(s) ran, %d completed\n", rep.Stopped, rep.Ran, rep.Completed)
	}
	if rep.OK() {
		return 0
	}
	return 1
}

func stepLine(s replay.Step) string {
	line := fmt.Sprintf("step %d  record %d  %-18s %s", s.N, s.Record, s.Tool, s.Status)
	if s.Code != "" {
		line += " (" + s.Code + ")"
	}
	if s.DurationMS > 0 {
		line += fmt.Sprintf("  %.1f ms", s.DurationMS)
	}
	if s.Detail != "" {
		line += "  " + s.Detail
	}
	return line
}

// replayCeiling allows exactly the modes the journal's sessions had, with the same
// conditions as `run`: unrestricted needs --dangerously-bypass-approvals and is not
// disabled by the managed startup configuration.
func replayCeiling(p *replay.Plan, bypass bool, getenv func(string) string) (authz.Ceiling, error) {
	c := authz.Ceiling{MaxSessionTTL: maxTTL, MaxIdleTTL: time.Hour}
	seen := map[authz.Mode]bool{}
	for _, s := range p.Sessions {
		m, err := authz.ParseMode(s.Mode)
		if err != nil {
			return c, fmt.Errorf("session %s: %w", s.Label, err)
		}
		if seen[m] {
			continue
		}
		seen[m] = true
		if m == authz.Unrestricted {
			disabled, err := unrestrictedDisabled(getenv)
			switch {
			case err != nil:
				return c, err
			case !bypass:
				return c, errors.New("the journal has a session in mode unrestricted: replaying it requires --dangerously-bypass-approvals")
			case disabled:
				return c, errors.New(errUnrestrictedDisable)
			}
			c.UnrestrictedAcknowledged = true
		}
		c.AllowedModes = append(c.AllowedModes, m)
	}
	if len(c.AllowedModes) == 0 {
		c.AllowedModes = []authz.Mode{authz.Standard}
	}
	return c, nil
}
