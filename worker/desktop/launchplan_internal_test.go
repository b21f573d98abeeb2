package desktop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/desktopentry"
)

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}

// testCatalog writes desktop entries into a temporary applications directory.
func testCatalog(t *testing.T, entries map[string]string) *desktopentry.Catalog {
	t.Helper()
	dir := t.TempDir()
	for id, src := range entries {
		if err := os.WriteFile(filepath.Join(dir, id), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return desktopentry.Scan([]string{dir})
}

func TestPlanLaunch(t *testing.T) {
	sh := lookPath(t, "sh")
	cat := lookPath(t, "cat")
	env := lookPath(t, "env")
	lookPath(t, "xterm")
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dashFile := filepath.Join(filepath.Dir(file), "-rf")
	os.WriteFile(dashFile, nil, 0o644)
	c := testCatalog(t, map[string]string{
		"viewer.desktop":  "[Desktop Entry]\nType=Application\nName=Viewer\nExec=cat %f\n",
		"browser.desktop": "[Desktop Entry]\nType=Application\nName=Browser\nExec=env --browse %U\n",
		"term.desktop":    "[Desktop Entry]\nType=Application\nName=Term\nExec=sh\n",
		"editor.desktop":  "[Desktop Entry]\nType=Application\nName=Editor\nExec=env \"exec cat\" %F\nTerminal=true\n",
		"twin-a.desktop":  "[Desktop Entry]\nType=Application\nName=Twin\nExec=true\n",
		"twin-b.desktop":  "[Desktop Entry]\nType=Application\nName=Twin\nExec=true --b\n",
		"quiet.desktop":   "[Desktop Entry]\nType=Application\nName=Quiet\nExec=cat --quiet\nNoDisplay=true\n",
		"broken.desktop":  "[Desktop Entry]\nType=Application\nName=Broken\nExec=sh -c a;b\n",
	})
	for _, tt := range []struct {
		name     string
		req      LaunchRequest
		argv     []string // nil: a refusal
		declared bool
		code     authz.Code
	}{
		{name: "desktop id", req: LaunchRequest{Name: "viewer"}, argv: []string{cat}, declared: true},
		{name: "desktop id with suffix", req: LaunchRequest{Name: "viewer.desktop"}, argv: []string{cat}, declared: true},
		{name: "entry name", req: LaunchRequest{Name: "Viewer"}, argv: []string{cat}, declared: true},
		{name: "file for %f", req: LaunchRequest{Name: "viewer", Args: []string{file}}, argv: []string{cat, file}, declared: true},
		{name: "option for %f", req: LaunchRequest{Name: "viewer", Args: []string{"--option"}}, code: authz.CodeInvalidArguments},
		{name: "dash file for %f", req: LaunchRequest{Name: "viewer", Args: []string{"-rf"}}, code: authz.CodeInvalidArguments},
		{name: "missing file for %f", req: LaunchRequest{Name: "viewer", Args: []string{file + ".missing"}}, code: authz.CodeInvalidArguments},
		{name: "directory for %f", req: LaunchRequest{Name: "viewer", Args: []string{filepath.Dir(file)}}, code: authz.CodeInvalidArguments},
		{name: "relative file for %f", req: LaunchRequest{Name: "viewer", Args: []string{"notes.txt"}}, code: authz.CodeInvalidArguments},
		{name: "unclean file for %f", req: LaunchRequest{Name: "viewer", Args: []string{filepath.Dir(file) + "/./notes.txt"}}, code: authz.CodeInvalidArguments},
		{name: "two files for %f", req: LaunchRequest{Name: "viewer", Args: []string{file, file}}, code: authz.CodeInvalidArguments},
		{name: "URL for %f", req: LaunchRequest{Name: "viewer", URLs: []string{"https://example.org/"}}, code: authz.CodeInvalidArguments},
		{name: "URLs and files for %U", req: LaunchRequest{Name: "browser", Args: []string{file}, URLs: []string{"https://example.org/a?b=c", "file://" + file, "mailto:a@example.org"}}, argv: []string{env, "--browse", file, "https://example.org/a?b=c", "file://" + file, "mailto:a@example.org"}, declared: true},
		{name: "javascript URL for %U", req: LaunchRequest{Name: "browser", URLs: []string{"javascript:alert(1)"}}, code: authz.CodeInvalidArguments},
		{name: "file URL of a missing file", req: LaunchRequest{Name: "browser", URLs: []string{"file:///nonexistent/x"}}, code: authz.CodeInvalidArguments},
		{name: "URL with user info", req: LaunchRequest{Name: "browser", URLs: []string{"https://u:p@example.org/"}}, code: authz.CodeInvalidArguments},
		{name: "option for %U", req: LaunchRequest{Name: "browser", URLs: []string{"--remote-debugging-port=1"}}, code: authz.CodeInvalidArguments},
		{name: "entry taking no arguments named with arguments", req: LaunchRequest{Name: "term", Args: []string{"-c", "id"}}, code: authz.CodeInvalidArguments},
		{name: "program of one entry", req: LaunchRequest{Name: "sh"}, argv: []string{sh}, declared: true},
		{name: "program with free arguments", req: LaunchRequest{Name: "sh", Args: []string{"-c", "id"}}, argv: []string{sh, "-c", "id"}},
		{name: "program of one entry that takes the file", req: LaunchRequest{Name: "cat", Args: []string{file}}, argv: []string{cat, file}, declared: true},
		{name: "program of no entry", req: LaunchRequest{Name: "xterm", Args: []string{"-e", "vim"}}, argv: []string{lookPath(t, "xterm"), "-e", "vim"}},
		{name: "terminal entry", req: LaunchRequest{Name: "editor", Args: []string{file}}, argv: append(termPrefix(t), env, "exec cat", file)},
		{name: "launch_path", req: LaunchRequest{Path: cat}, argv: []string{cat}},
		{name: "relative launch_path", req: LaunchRequest{Path: "bin/cat"}, code: authz.CodeInvalidArguments},
		{name: "path as name", req: LaunchRequest{Name: cat, Args: []string{file}}, argv: []string{cat, file}},
		{name: "name and launch_path", req: LaunchRequest{Name: "cat", Path: cat}, code: authz.CodeInvalidArguments},
		{name: "ambiguous name", req: LaunchRequest{Name: "Twin"}, code: authz.CodeInvalidArguments},
		{name: "NoDisplay entry by id", req: LaunchRequest{Name: "quiet"}, argv: []string{cat, "--quiet"}, declared: true},
		{name: "NoDisplay entry not by Name", req: LaunchRequest{Name: "Quiet"}, code: authz.CodeInvalidArguments},
		{name: "broken entry by id", req: LaunchRequest{Name: "broken"}, code: authz.CodeInvalidArguments},
		{name: "missing program", req: LaunchRequest{Name: "no-such-program-xyz"}, code: authz.CodeInvalidArguments},
		{name: "NUL in argument", req: LaunchRequest{Name: "sh", Args: []string{"a\x00b"}}, code: authz.CodeInvalidArguments},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := PlanLaunch(tt.req, c)
			if tt.argv == nil {
				var r *authz.Refusal
				if !errors.As(err, &r) || r.Code != tt.code {
					t.Fatalf("PlanLaunch(%+v) = %+v, %v; want refusal %s", tt.req, p, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanLaunch(%+v) = %v", tt.req, err)
			}
			if !slices.Equal(p.Argv, tt.argv) || p.Declared != tt.declared {
				t.Errorf("PlanLaunch(%+v) = %q declared %v (%s); want %q declared %v", tt.req, p.Argv, p.Declared, p.Why, tt.argv, tt.declared)
			}
		})
	}
}

func termPrefix(t *testing.T) []string {
	term, err := terminalEmulator()
	if err != nil {
		t.Skip(err)
	}
	return []string{term, "-e"}
}

func TestQuoteCommand(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/bin/xterm", "-e", "vim"}, "/usr/bin/xterm -e vim"},
		{[]string{"/bin/sh", "-c", "echo hi; rm -rf ~"}, "/bin/sh -c 'echo hi; rm -rf ~'"},
		{[]string{"a", "it's", ""}, `a 'it'\''s' ''`},
		{[]string{"a", "x\ny"}, `a $'x\ny'`},
		{[]string{"a", "\x1b[2Jok"}, `a $'\x1b[2Jok'`},
		{[]string{"a", "safe\u202eexe.txt"}, `a $'safe\u202eexe.txt'`},
		{[]string{"a", "it's\r"}, `a $'it\'s\x0d'`},
		{[]string{"a", "\xff"}, `a $'\xff'`},
	} {
		if got := QuoteCommand(tt.argv); got != tt.want {
			t.Errorf("QuoteCommand(%q) = %s, want %s", tt.argv, got, tt.want)
		}
		if strings.ContainsAny(QuoteCommand(tt.argv), "\n\r\x1b") {
			t.Errorf("QuoteCommand(%q) holds a control character", tt.argv)
		}
	}
}
