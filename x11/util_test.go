package x11_test

import (
	"errors"
	"os/exec"

	"github.com/jezek/xgb/xproto"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func xprotoKeysym(v uint32) xproto.Keysym { return xproto.Keysym(v) }

func execCommand(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
