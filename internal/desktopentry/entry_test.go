package desktopentry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const head = "[Desktop Entry]\nType=Application\nName=App\n"

var parseTests = []struct {
	name  string
	src   string
	ok    bool
	files FileArgs
	// argv is Expand(files) when ok and want is set.
	expandWith []string
	argv       []string
}{
	{name: "xterm", src: "# comment\n\n[Desktop Entry]\nName=XTerm\n#GenericName=Terminal\nExec=xterm\nTerminal=false\nType=Application\nIcon=mini.xterm\nKeywords=shell;prompt;\nName[de]=XTerm\n", ok: true, files: NoFiles, argv: []string{"xterm"}},
	{name: "vim %F", src: "[Desktop Entry]\nName=Vim\nTryExec=vim\nExec=vim %F\nTerminal=true\nType=Application\n", ok: true, files: ManyFiles, expandWith: []string{"/a", "/b c"}, argv: []string{"vim", "/a", "/b c"}},
	{name: "one file none given", src: head + "Exec=viewer --x %f\n", ok: true, files: OneFile, argv: []string{"viewer", "--x"}},
	{name: "one url", src: head + "Exec=browser %u\n", ok: true, files: OneURL, expandWith: []string{"https://example.org/"}, argv: []string{"browser", "https://example.org/"}},
	{name: "quoted", src: head + `Exec="/opt/my app/bin" "a b" "q\\"x" "d\\$" "bt\\` + "`" + `" "bs\\\\"` + "\n", ok: true, files: NoFiles, argv: []string{"/opt/my app/bin", "a b", `q"x`, "d$", "bt`", `bs\`}},
	{name: "escape s", src: head + `Exec=echo a\sb` + "\n", ok: true, files: NoFiles, argv: []string{"echo", "a", "b"}},
	{name: "escape s quoted", src: head + `Exec=echo "a\sb"` + "\n", ok: true, files: NoFiles, argv: []string{"echo", "a b"}},
	{name: "percent codes", src: head + "Icon=app-icon\nExec=app %i --name=%c --file=%k 100%% %d\n", ok: true, files: NoFiles, argv: []string{"app", "--icon", "app-icon", "--name=App", "--file=", "100%"}},
	{name: "icon absent", src: head + "Exec=app %i\n", ok: true, files: NoFiles, argv: []string{"app"}},
	{name: "spaces around =", src: "[Desktop Entry]\nType = Application\nName= App\nExec =app\n", ok: true, files: NoFiles, argv: []string{"app"}},
	{name: "other group", src: head + "Exec=app\n[Desktop Action new]\nName=New\nExec=app --new\n", ok: true, files: NoFiles, argv: []string{"app"}},
	{name: "link type has no exec rules", src: "[Desktop Entry]\nType=Link\nName=L\nURL=https://x\n", ok: true},
	{name: "hidden", src: head + "Exec=app\nHidden=true\nNoDisplay=true\n", ok: true, files: NoFiles, argv: []string{"app"}},

	{name: "empty", src: "", ok: false},
	{name: "not first group", src: "[Other]\nA=b\n[Desktop Entry]\nType=Application\nName=x\nExec=x\n", ok: false},
	{name: "key before group", src: "Name=x\n" + head + "Exec=x\n", ok: false},
	{name: "duplicate key", src: head + "Exec=a\nExec=b\n", ok: false},
	{name: "duplicate group", src: head + "Exec=a\n[Desktop Entry]\n", ok: false},
	{name: "no type", src: "[Desktop Entry]\nName=x\nExec=x\n", ok: false},
	{name: "no name", src: "[Desktop Entry]\nType=Application\nExec=x\n", ok: false},
	{name: "bad bool", src: head + "Exec=x\nTerminal=yes\n", ok: false},
	{name: "bad key", src: head + "Ex_ec=x\n", ok: false},
	{name: "bad locale", src: head + "Name[de=x\nExec=x\n", ok: false},
	{name: "no equals", src: head + "Exec\n", ok: false},
	{name: "control char", src: head + "Exec=x\x01\n", ok: false},
	{name: "nul", src: head + "Exec=x\x00\n", ok: false},
	{name: "carriage return", src: head + "Exec=x\r\n", ok: false},
	{name: "bad utf8", src: head + "Name[fr]=\xff\nExec=x\n", ok: false},
	{name: "unknown escape", src: head + `Exec=x \q` + "\n", ok: false},
	{name: "unquoted reserved", src: head + "Exec=sh -c echo;rm\n", ok: false},
	{name: "unquoted dollar", src: head + "Exec=echo $HOME\n", ok: false},
	{name: "unterminated quote", src: head + `Exec=sh -c "echo` + "\n", ok: false},
	{name: "quote mid argument", src: head + `Exec=a"b"` + "\n", ok: false},
	{name: "text after closing quote", src: head + `Exec="a"b` + "\n", ok: false},
	{name: "bad escape in quotes", src: head + `Exec="a\\nb"` + "\n", ok: false},
	{name: "two file codes", src: head + "Exec=app %f %U\n", ok: false},
	{name: "file code inside argument", src: head + "Exec=app --file=%f\n", ok: false},
	{name: "file code quoted", src: head + `Exec=sh -c "app %f"` + "\n", ok: false},
	{name: "unknown code", src: head + "Exec=app %z\n", ok: false},
	{name: "lone percent", src: head + "Exec=app 100%\n", ok: false},
	{name: "code in program", src: head + "Exec=%f\n", ok: false},
	{name: "empty exec line is no exec", src: head + "Exec=\n", ok: true, files: NoFiles},
	{name: "empty program", src: head + `Exec="" x` + "\n", ok: false},
	{name: "blank exec", src: head + "Exec=\\s\n", ok: false},
	{name: "malformed header", src: "[Desktop Entry\nType=Application\n", ok: false},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse([]byte(tt.src))
			if (err == nil) != tt.ok {
				t.Fatalf("Parse() error = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrSyntax) {
					t.Errorf("Parse() error %v does not wrap ErrSyntax", err)
				}
				return
			}
			if tt.files != 0 && e.Files != tt.files {
				t.Errorf("Files = %v, want %v", e.Files, tt.files)
			}
			if tt.argv != nil {
				argv, err := e.Expand(tt.expandWith)
				if err != nil || !slices.Equal(argv, tt.argv) {
					t.Errorf("Expand(%q) = %q, %v; want %q", tt.expandWith, argv, err, tt.argv)
				}
			}
		})
	}
}

func TestExpandCounts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		exec  string
		files []string
		ok    bool
	}{
		{"none takes none", "app", []string{"/a"}, false},
		{"one takes one", "app %f", []string{"/a"}, true},
		{"one takes not two", "app %u", []string{"/a", "/b"}, false},
		{"many take two", "app %U", []string{"/a", "/b"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse([]byte(head + "Exec=" + tt.exec + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Expand(tt.files); (err == nil) != tt.ok {
				t.Errorf("Expand(%q) error = %v, want ok %v", tt.files, err, tt.ok)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	if _, err := Parse([]byte(head + "Exec=x\n" + strings.Repeat("#", MaxFileSize))); err == nil {
		t.Error("Parse(oversized) = nil error")
	}
	if _, err := Parse([]byte(head + "Exec=x" + strings.Repeat(" a", MaxArgs) + "\n")); err == nil {
		t.Error("Parse(too many arguments) = nil error")
	}
	if _, err := Parse([]byte(head + "Comment=" + strings.Repeat("a", MaxValueLen+1) + "\nExec=x\n")); err == nil {
		t.Error("Parse(long value) = nil error")
	}
}

func TestDirs(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if got, want := Dirs(get), []string{"/home/u/.local/share/applications", "/usr/local/share/applications", "/usr/share/applications"}; !slices.Equal(got, want) {
		t.Errorf("Dirs(defaults) = %q, want %q", got, want)
	}
	env = map[string]string{"XDG_DATA_HOME": "/d/home", "XDG_DATA_DIRS": "/d/a:relative:/d/b/:/d/a"}
	if got, want := Dirs(get), []string{"/d/home/applications", "/d/a/applications", "/d/b/applications"}; !slices.Equal(got, want) {
		t.Errorf("Dirs(set) = %q, want %q", got, want)
	}
}

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	hi, lo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(lo, "app.desktop"), head+"Exec=lo-app\n")
	write(t, filepath.Join(hi, "app.desktop"), head+"Exec=hi-app\n")
	write(t, filepath.Join(lo, "gone.desktop"), head+"Exec=gone\n")
	write(t, filepath.Join(hi, "gone.desktop"), head+"Exec=gone\nHidden=true\n")
	write(t, filepath.Join(lo, "broken.desktop"), head+"Exec=ok\n")
	write(t, filepath.Join(hi, "broken.desktop"), head+"Exec=sh -c a;b\n")
	write(t, filepath.Join(hi, "vendor", "tool.desktop"), head+"Exec=tool\n")
	write(t, filepath.Join(hi, "missing.desktop"), head+"Exec=x\nTryExec=/nonexistent/prog\n")
	write(t, filepath.Join(hi, "link.desktop"), "[Desktop Entry]\nType=Link\nName=L\n")
	write(t, filepath.Join(hi, "quiet.desktop"), head+"Exec=quiet\nNoDisplay=true\n")
	write(t, filepath.Join(hi, "notes.txt"), "x")
	c := Scan([]string{hi, filepath.Join(hi, "absent"), lo})
	for _, tt := range []struct {
		id   string
		prog string // "" means an error
	}{
		{"app.desktop", "hi-app"}, {"gone.desktop", ""}, {"broken.desktop", ""}, {"vendor-tool.desktop", "tool"},
		{"missing.desktop", ""}, {"link.desktop", ""}, {"quiet.desktop", "quiet"}, {"nope.desktop", ""},
	} {
		e, err := c.Lookup(tt.id)
		prog := ""
		if err == nil {
			prog, _ = e.Program()
		}
		if prog != tt.prog {
			t.Errorf("Lookup(%s) = %q, %v; want %q", tt.id, prog, err, tt.prog)
		}
	}
	var ids []string
	for _, e := range c.Entries() {
		ids = append(ids, e.ID)
	}
	if want := []string{"app.desktop", "vendor-tool.desktop"}; !slices.Equal(ids, want) {
		t.Errorf("Entries() = %q, want %q", ids, want)
	}
}

// FuzzParseDesktopEntry checks that Parse never panics, that what it accepts expands
// without panicking, and that an accepted Exec never yields an empty program.
func FuzzParseDesktopEntry(f *testing.F) {
	for _, tt := range parseTests {
		f.Add([]byte(tt.src), "/tmp/a")
	}
	f.Fuzz(func(t *testing.T, data []byte, file string) {
		e, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse error %v does not wrap ErrSyntax", err)
			}
			return
		}
		if e.Type == "" || e.Name == "" {
			t.Fatalf("Parse accepted an entry without Type or Name: %+v", e)
		}
		if len(e.args) == 0 {
			return
		}
		if prog, ok := e.Program(); !ok || prog == "" {
			t.Fatalf("accepted Exec %q has no program", e.Exec)
		}
		var files []string
		if e.Files.Max() != 0 {
			files = []string{file}
		}
		argv, err := e.Expand(files)
		if err != nil {
			t.Fatalf("Expand(%q) of accepted Exec %q: %v", files, e.Exec, err)
		}
		if len(argv) == 0 || len(argv) > 2*MaxArgs+len(files) {
			t.Fatalf("Expand of %q = %d arguments", e.Exec, len(argv))
		}
	})
}
