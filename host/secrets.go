package host

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// openSecretsDir opens the credentials directory at path for the worker: an O_PATH
// descriptor of the directory, reached from "/" without following any symbolic link
// (openat2 with RESOLVE_NO_SYMLINKS; a kernel without openat2 fails). The host reads
// nothing in it; the caller owns the file.
func openSecretsDir(path string) (*os.File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("secrets directory: %w", err)
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for range 16 {
		if fd, err = unix.Openat2(unix.AT_FDCWD, abs, &how); err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	if err != nil {
		if err == unix.ELOOP {
			err = fmt.Errorf("a symbolic link is in the path (%w)", err)
		}
		return nil, fmt.Errorf("secrets directory: %w", &fs.PathError{Op: "open", Path: abs, Err: err})
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// maxSecretServiceAttributes bounds SecretServiceOptions.Attributes.
const maxSecretServiceAttributes = 16

// secretService checks o's Secret Service selection and returns what Hello says of it,
// the bus address resolved ($DBUS_SESSION_BUS_ADDRESS when none is given); nil when o
// selects none.
func secretService(o Options) (*cuav1.SecretService, error) {
	ss := o.SecretService
	if ss == nil {
		return nil, nil
	}
	if o.SecretsDir != "" {
		return nil, errors.New("secret service: a credentials directory and the Secret Service cannot be combined; name one")
	}
	if len(ss.Attributes) == 0 {
		return nil, errors.New("secret service: no attributes select the items (the whole keyring is never made available)")
	}
	if len(ss.Attributes) > maxSecretServiceAttributes {
		return nil, fmt.Errorf("secret service: more than %d attributes", maxSecretServiceAttributes)
	}
	for k, v := range ss.Attributes {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("secret service: attribute %q=%q: a name must be non-empty, and both valid UTF-8", k, v)
		}
	}
	addr := ss.BusAddress
	if addr == "" {
		addr = os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	}
	if addr == "" {
		return nil, errors.New("secret service: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
	}
	out := &cuav1.SecretService{BusAddress: addr}
	for _, k := range slices.Sorted(maps.Keys(ss.Attributes)) {
		out.Attributes = append(out.Attributes, &cuav1.Attribute{Name: k, Value: ss.Attributes[k]})
	}
	return out, nil
}

// busSocketPaths returns the socket files a D-Bus address names with unix:path=, for the
// sandbox to hide. An abstract socket (unix:abstract=) has no file to hide.
func busSocketPaths(addr string) []string {
	var out []string
	for _, a := range strings.Split(addr, ";") {
		rest, ok := strings.CutPrefix(a, "unix:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "path="); ok {
				if p, err := url.PathUnescape(v); err == nil && filepath.IsAbs(p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}
