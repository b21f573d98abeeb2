package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCheckPeer(t *testing.T) {
	tests := []struct {
		name    string
		cred    *unix.Ucred
		uid     int
		wantErr bool
	}{
		{name: "same user", cred: &unix.Ucred{Pid: 10, Uid: 1000}, uid: 1000},
		{name: "another user", cred: &unix.Ucred{Pid: 10, Uid: 1001}, uid: 1000, wantErr: true},
		{name: "root is another user too", cred: &unix.Ucred{Pid: 10, Uid: 0}, uid: 1000, wantErr: true},
		{name: "no credentials", cred: nil, uid: 1000, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPeer(tt.cred, tt.uid)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrForeignPeer)) {
				t.Errorf("CheckPeer(%+v, %d) = %v, want error %v", tt.cred, tt.uid, err, tt.wantErr)
			}
		})
	}
}

// serveEndpoint serves a proxy on a fake caller at a unix socket in dir (mode of the
// directory: the caller's) until the test ends.
func serveEndpoint(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(fakeCaller{}, Options{}).ServeUnix(ctx, ln, os.Getuid()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeUnix = %v", err)
		}
	})
	return path
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"

// TestEndpointServesOwner: a peer of the same user gets MCP on the endpoint.
func TestEndpointServesOwner(t *testing.T) {
	path := serveEndpoint(t, t.TempDir())
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(initLine))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize answer = %q, %v; want a result", line, err)
	}
}

// TestEndpointRefusesOtherUser connects as another user (nobody, through python3, with
// the socket made reachable on purpose: in serve the 0700 directory already stops it) and
// checks that the connection is closed without a byte of MCP. It needs root to switch
// users; without root, TestCheckPeer covers the decision alone.
func TestEndpointRefusesOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user; TestCheckPeer checks the decision")
	}
	py, err := exec.LookPath("/usr/bin/python3") // a system path another user can execute
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is missing")
		}
		t.Skip("python3 is missing")
	}
	dir, err := os.MkdirTemp("", "peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	path := serveEndpoint(t, dir)
	os.Chmod(path, 0o777)
	script := `import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
try:
    s.sendall(sys.argv[2].encode())
except OSError:
    pass
try:
    data=s.recv(4096)
except OSError:
    data=b""
print("GOT:" + data.decode(errors="replace"))`
	cmd := exec.Command(py, "-c", script, path, initLine)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "GOT:" {
		t.Errorf("another user's connection got %q, want it closed with nothing", got)
	}
}
