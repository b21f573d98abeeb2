package display

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// xdpyinfoExtensions lists the extensions of display name with xdpyinfo, an X client
// independent of this package, as the oracle of ProbeServer's list.
func xdpyinfoExtensions(t *testing.T, name, xauth string) []string {
	t.Helper()
	cmd := exec.Command("xdpyinfo", "-display", name)
	cmd.Env = []string{"XAUTHORITY=" + xauth, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xdpyinfo: %v", err)
	}
	var exts []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "number of extensions:"):
			in = true
		case in && strings.HasPrefix(line, "    "):
			exts = append(exts, strings.TrimSpace(line))
		case in:
			in = false
		}
	}
	slices.Sort(exts)
	return exts
}

// TestProbeServer: with the cookie in the named Xauthority file the server answers and
// ProbeServer lists exactly the extensions xdpyinfo lists, with XInput 2.2 and X-Resource
// 1.2; without a cookie (no file, a file without the display's entry) or with a wrong
// one, the refusal says which; a server started without -auth answers with no cookie at
// all; no window manager is reported on a bare server.
func TestProbeServer(t *testing.T) {
	requirePrograms(t, "Xvfb", "xdpyinfo")
	dir := t.TempDir()
	xauth := filepath.Join(dir, "Xauthority")
	cookie, err := newCookie()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeXauthority(xauth, cookie, -1); err != nil {
		t.Fatal(err)
	}
	guarded := plainXvfb(t, "-auth", xauth)
	if err := writeXauthority(xauth, cookie, displayNum(t, guarded)); err != nil {
		t.Fatal(err)
	}

	f, err := ProbeServer(t.Context(), guarded, xauth)
	if err != nil {
		t.Fatalf("ProbeServer(%s, cookie) = %v", guarded, err)
	}
	if want := xdpyinfoExtensions(t, guarded, xauth); !slices.Equal(f.Extensions, want) {
		t.Errorf("ProbeServer(%s).Extensions = %v\nxdpyinfo lists %v", guarded, f.Extensions, want)
	}
	for _, ext := range []string{"XTEST", "XInputExtension", "MIT-SHM", "SECURITY", "RANDR", "XKEYBOARD", "X-Resource"} {
		if !f.Has(ext) {
			t.Errorf("ProbeServer(%s) has no %s; Xvfb offers it", guarded, ext)
		}
	}
	if !AtLeast(f.XInput, 2, 2) || !AtLeast(f.XRes, 1, 2) {
		t.Errorf("ProbeServer(%s) versions XInput %q, X-Resource %q; want at least 2.2 and 1.2", guarded, f.XInput, f.XRes)
	}
	if f.Cookie != xauth || f.WMCheck || f.WindowManager != "" {
		t.Errorf("ProbeServer(%s) = cookie %q, wm check %v %q; want the cookie of %s and no window manager", guarded, f.Cookie, f.WMCheck, f.WindowManager, xauth)
	}

	other := filepath.Join(dir, "other")
	wrong, err := newCookie()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeXauthority(other, wrong, displayNum(t, guarded)+1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, xauth, want string
	}{
		{"no file named", "", "no cookie was sent: no Xauthority file"},
		{"missing file", filepath.Join(dir, "absent"), "no cookie was sent: open"},
		{"no entry for the display", other, "no cookie was sent: " + other + " has no MIT-MAGIC-COOKIE-1 for display " + guarded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ProbeServer(t.Context(), guarded, tc.xauth)
			if !errors.Is(err, ErrAuthRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ProbeServer(%s, %q) = %v; want ErrAuthRefused saying %q", guarded, tc.xauth, err, tc.want)
			}
		})
	}
	if err := writeXauthority(other, wrong, displayNum(t, guarded)); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeServer(t.Context(), guarded, other); !errors.Is(err, ErrAuthRefused) || !strings.Contains(err.Error(), "cookie for "+guarded+" in "+other+" was sent") {
		t.Errorf("ProbeServer(%s, wrong cookie) = %v; want ErrAuthRefused naming the file whose cookie was sent", guarded, err)
	}

	open := plainXvfb(t)
	if f, err := ProbeServer(t.Context(), open, ""); err != nil || f.Cookie != "" || !f.Has("XTEST") {
		t.Errorf("ProbeServer(%s without -auth, no cookie) = %+v, %v; want admitted without a cookie", open, f, err)
	}
	if _, err := ProbeServer(t.Context(), ":65000", ""); err == nil || errors.Is(err, ErrAuthRefused) {
		t.Errorf("ProbeServer(:65000) = %v; want a connection error", err)
	}
}

// TestProbeServerWindowManager: on a private display with openbox, ProbeServer names the
// window manager as openbox names itself on its check window.
func TestProbeServerWindowManager(t *testing.T) {
	requirePrograms(t, "Xvfb", "openbox")
	d, err := Start(t.Context(), Options{WindowManager: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := ProbeServer(t.Context(), d.Name(), d.XAuthority())
	if err != nil || !f.WMCheck || f.WindowManager != "Openbox" {
		t.Errorf("ProbeServer(%s with openbox) = %+v, %v; want window manager Openbox", d.Name(), f, err)
	}
}

func TestAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v          string
		maj, minor int
		want       bool
	}{
		{"2.2", 2, 2, true}, {"2.4", 2, 2, true}, {"3.0", 2, 2, true}, {"2.1", 2, 2, false},
		{"1.9", 2, 2, false}, {"", 2, 2, false}, {"x", 1, 0, false},
	} {
		if got := AtLeast(tc.v, tc.maj, tc.minor); got != tc.want {
			t.Errorf("AtLeast(%q, %d, %d) = %v, want %v", tc.v, tc.maj, tc.minor, got, tc.want)
		}
	}
}

func extensionReply(names ...string) []byte {
	rep := make([]byte, 32)
	rep[0], rep[1] = 1, byte(len(names))
	for _, n := range names {
		rep = append(rep, byte(len(n)))
		rep = append(rep, n...)
	}
	for len(rep)%4 != 0 {
		rep = append(rep, 0)
	}
	return rep
}

func TestParseExtensionNames(t *testing.T) {
	got, err := parseExtensionNames(extensionReply("XTEST", "MIT-SHM"))
	if err != nil || !slices.Equal(got, []string{"XTEST", "MIT-SHM"}) {
		t.Errorf("parseExtensionNames = %v, %v; want [XTEST MIT-SHM]", got, err)
	}
	short := extensionReply("XTEST")[:32+1+len("XTEST")]
	short[1] = 2 // announces a name that is not there
	if _, err := parseExtensionNames(short); err == nil {
		t.Error("parseExtensionNames accepted a reply without the name it announced")
	}
	if _, err := parseExtensionNames(short[:8]); err == nil {
		t.Error("parseExtensionNames accepted a short reply")
	}
}

// FuzzParseExtensionNames: any reply decodes to names or an error, never a panic.
func FuzzParseExtensionNames(f *testing.F) {
	f.Add(extensionReply("XTEST", "MIT-SHM"))
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, rep []byte) {
		names, err := parseExtensionNames(rep)
		if err == nil && len(names) != int(rep[1]) {
			t.Fatalf("parseExtensionNames = %d names, nil; reply announced %d", len(names), rep[1])
		}
	})
}
