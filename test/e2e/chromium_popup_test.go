package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// popupPage is a page with a <select> whose choice, and a drop target whose drop, set the
// page's title: the window's name, which xdotool reads from outside cua-host.
const popupPage = `<!doctype html><html><head><title>popup-ready</title></head><body style="margin:0">
<select id="s" style="position:absolute;left:20px;top:20px;width:200px;height:30px;font-size:16px">
<option>alpha</option><option>beta</option><option>gamma</option></select>
<div id="src" draggable="true" style="position:absolute;left:20px;top:220px;width:80px;height:40px;background:#c00">drag</div>
<div id="dst" style="position:absolute;left:300px;top:220px;width:120px;height:80px;background:#0c0">drop</div>
<script>
const s = document.getElementById('s'), dst = document.getElementById('dst');
s.addEventListener('change', () => { document.title = 'chose ' + s.value; });
dst.addEventListener('dragover', e => e.preventDefault());
dst.addEventListener('drop', e => { e.preventDefault(); document.title = 'dropped'; });
</script></body></html>`

// TestChromiumPopupAndDrop: in a Chromium window the person opened on their display, the
// session's own pointer opens a <select> popup, picks an option in it, and drags an
// element onto an HTML drop target, in the background. Witnesses: the page's title
// (xdotool getwindowname) and the person's pointer and focus (xdotool), which never move.
func TestChromiumPopupAndDrop(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool")
	chromium := needApp(t, "chromium")
	p := startPerson(t)
	page := filepath.Join(t.TempDir(), "popup.html")
	if err := os.WriteFile(page, []byte(popupPage), 0o644); err != nil {
		t.Fatal(err)
	}
	// The person's browser: an app window without a toolbar, so the page starts at the
	// window's top left; --test-type keeps the --no-sandbox warning bar away.
	// Its profile is removed only after its whole process group is gone: helper processes
	// go on writing into it for a moment after the browser itself.
	profile, err := os.MkdirTemp("", "cua-popup-profile-")
	if err != nil {
		t.Fatal(err)
	}
	browser := exec.Command(chromium, "--no-sandbox", "--test-type", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--password-store=basic",
		"--user-data-dir="+profile, "--window-size=700,500", "--window-position=60,60", "--app=file://"+page)
	browser.Env = p.env()
	browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := browser.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-browser.Process.Pid, syscall.SIGKILL)
		browser.Wait()
		waitFor(5*time.Second, func() bool { return syscall.Kill(-browser.Process.Pid, 0) != nil })
		os.RemoveAll(profile)
	})
	var win string
	if !waitFor(30*time.Second, func() bool { win = p.search("^popup-ready$"); return win != "" }) {
		t.Fatal("the person's browser never showed the page")
	}
	p.xdo("windowactivate", "--sync", p.term)
	p.xdo("mousemove", "--sync", "1270", "790")
	time.Sleep(500 * time.Millisecond) // the page lays out
	pid, _ := strconv.Atoi(p.xdo("getwindowpid", win))
	wid, _ := strconv.Atoi(win)
	rp := startRunEnv(t, append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8"), "--display", p.d.Name(),
		"--mode", "unrestricted", "--dangerously-bypass-approvals", "--indicator=false")
	at := func(kv ...any) map[string]any { return with(map[string]any{"pid": pid, "window_id": wid}, kv...) }
	title := func(want string) {
		t.Helper()
		var got string
		if !waitFor(5*time.Second, func() bool { got = p.xdo("getwindowname", win); return strings.HasPrefix(got, want) }) {
			t.Errorf("the page's title is %q, want %q", got, want)
		}
	}

	// The <select>: a click opens its popup (a window of its own), a click in it chooses.
	rp.mustCall(t, "click", at("x", 120, "y", 35))
	p.untouched("after opening the popup")
	time.Sleep(300 * time.Millisecond) // the popup maps
	// The second option: the popup starts under the select (y 50), and its rows are 20 to
	// 28 pixels high with the fonts Debian installs, so y 86 lies in the second row.
	rp.mustCall(t, "click", at("x", 60, "y", 86))
	title("chose beta")
	p.untouched("after choosing in the popup")

	// HTML drag and drop through the session's pointer.
	rp.mustCall(t, "drag", at("from_x", 60, "from_y", 240, "to_x", 360, "to_y", 260, "steps", 20))
	title("dropped")
	p.untouched("after the drop")
}
