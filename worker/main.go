package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// Exit codes of a worker process.
const (
	ExitOK        = 0
	ExitError     = 1
	ExitViolation = 2
	ExitUsage     = 64
)

// Main is a worker process's entry point (the hidden contract.WorkerSubcommand): it
// serves the control channel inherited at contract.WorkerControlFD and returns the process
// exit code. args are the words after the subcommand (contract.WorkerFlags). cfg.Logger,
// when nil, becomes a JSON logger on stderr that the host turns back into structured
// records.
func Main(args []string, cfg Config) int {
	useOneThread(os.Getenv)
	flags, err := contract.ParseWorkerFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cua-host worker: %v\n", err)
		return ExitUsage
	}
	if flags.HelloTimeout > 0 {
		cfg.HelloTimeout = flags.HelloTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: flags.LogLevel}))
	}
	log := cfg.Logger

	if err := checkControlFD(contract.WorkerControl.FD); err != nil {
		log.Error("no control channel; a worker is started by its host", "err", err)
		return ExitUsage
	}
	f, err := wire.FileFromFD(contract.WorkerControl.FD, contract.WorkerControl.Name)
	if err != nil {
		log.Error("open control channel", "err", err)
		return ExitError
	}
	ctrl, err := wire.NewControlConn(f)
	if err != nil {
		log.Error("open control channel", "err", err)
		return ExitError
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = Run(ctx, ctrl, cfg)
	switch {
	case err == nil, errors.Is(err, ErrShutdown):
		log.Debug("worker exiting")
		return ExitOK
	case errors.Is(err, context.Canceled):
		log.Info("worker stopped by signal")
		return ExitOK
	}
	if _, ok := wire.IsViolation(err); ok {
		log.Error("worker exiting after a protocol violation", "err", err)
		return ExitViolation
	}
	log.Error("worker exiting", "err", err)
	return ExitError
}

// checkControlFD verifies that fd is an AF_UNIX SOCK_SEQPACKET socket.
func checkControlFD(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Errorf("fd %d is not a socket: %w", fd, err)
	}
	if typ != unix.SOCK_SEQPACKET {
		return fmt.Errorf("fd %d is a socket of type %d, want SOCK_SEQPACKET", fd, typ)
	}
	return nil
}
