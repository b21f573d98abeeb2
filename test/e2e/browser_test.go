package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkReportInBrowser loads the report in headless Chromium (when CI installs it, a
// missing browser is a failure), checks the rendered DOM shows every call, and keeps a
// screenshot of the page as an artefact (in $CUA_ARTIFACTS, else the test's directory).
func checkReportInBrowser(t *testing.T, report string, tools []string) {
	t.Helper()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (scripts/setup.sh installs it)")
		}
		t.Log("chromium is not installed: the report is not rendered in a browser")
		return
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=3000"}
	dom, err := exec.Command(browser, append(flags, "--dump-dom", "file://"+report)...).Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v", browser, err)
	}
	page := string(dom)
	for _, tool := range tools {
		if !strings.Contains(page, `data-tool="`+tool+`"`) {
			t.Errorf("the rendered report has no call of %s", tool)
		}
	}
	if !strings.Contains(page, "calls shown") {
		t.Errorf("the report's script did not run (no \"calls shown\" in the DOM)")
	}
	dir := os.Getenv("CUA_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, "journal-report.png")
	if out, err := exec.Command(browser, append(flags, "--window-size=1280,2000", "--screenshot="+shot, "file://"+report)...).CombinedOutput(); err != nil {
		t.Fatalf("%s --screenshot: %v\n%s", browser, err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot of the report at %s: %v", shot, err)
	}
	t.Logf("screenshot of the rendered report: %s", shot)
}
