package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// TestStatusNamesTheDisplaysWeaknesses: `cua-host status --json` on a display with a
// cookie and no physical input device (Xvfb) says that clients need the cookie and that
// the display is XTEST-only (the consent dialog cannot tell the person from a program
// there); after `xhost +si:localuser:USER` it says the user is admitted without a cookie,
// naming the entry. The xhost change is made by xhost itself, a separate X client.
func TestStatusNamesTheDisplaysWeaknesses(t *testing.T) {
	need(t, "Xvfb", "xhost")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{Width: 640, Height: 480})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	env := append(os.Environ(), d.Env()...)
	status := func() (st struct {
		Display struct {
			NoCookie bool     `json:"admits_user_without_cookie"`
			Hosts    []string `json:"host_entries"`
			Input    string   `json:"input"`
		} `json:"display"`
		Sandbox struct {
			Available bool `json:"available"`
		} `json:"sandbox"`
	}) {
		t.Helper()
		cmd := exec.Command(cuaHost, "status", "--json")
		cmd.Env = env
		out, _ := cmd.Output()
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return st
	}
	st := status()
	if st.Display.NoCookie || st.Display.Input != "xtest_only" || !st.Sandbox.Available {
		t.Errorf("status on Xvfb with a cookie = %+v, want a cookie needed, xtest_only, a sandbox", st)
	}
	user := os.Getenv("USER")
	if user == "" {
		if os.Getuid() != 0 {
			t.Skip("USER is unset")
		}
		user = "root"
	}
	xhost := exec.Command("xhost", "+si:localuser:"+user)
	xhost.Env = env
	if out, err := xhost.CombinedOutput(); err != nil {
		t.Fatalf("xhost: %v: %s", err, out)
	}
	st = status()
	if !st.Display.NoCookie || len(st.Display.Hosts) == 0 || st.Display.Hosts[0] != "si:localuser:"+user {
		t.Errorf("status after xhost +si:localuser:%s = %+v, want the user admitted by that entry", user, st.Display)
	}
}
