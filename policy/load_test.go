package policy_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

func TestLoad(t *testing.T) {
	const rego = "package cua.policy\n\ndefault allow := false\n"
	tests := []struct {
		name     string
		files    map[string]string // written under a temporary directory
		path     string            // relative to that directory
		kind     policy.Kind
		names    []string // the layer's files, in order
		wantErr  error
		errParts []string // substrings of the error message
	}{
		{name: "yaml", files: map[string]string{"p.yaml": "{}"}, path: "p.yaml", kind: policy.KindYAML, names: []string{"p.yaml"}},
		{name: "yml", files: map[string]string{"p.yml": "{}"}, path: "p.yml", kind: policy.KindYAML, names: []string{"p.yml"}},
		{name: "upper case extension", files: map[string]string{"P.YAML": "{}"}, path: "P.YAML", kind: policy.KindYAML, names: []string{"P.YAML"}},
		{name: "rego file", files: map[string]string{"p.rego": rego}, path: "p.rego", kind: policy.KindRego, names: []string{"p.rego"}},
		{
			name: "directory in name order, non-recursive",
			files: map[string]string{
				"d/b.rego": rego, "d/a.rego": "package cua.lib\n", "d/10.rego": "package cua.more\n",
				"d/C.REGO": "package cua.upper\n", "d/notes.txt": "ignored", "d/sub/z.rego": "not even rego",
				"d/dir.rego/x.rego": "ignored too",
			},
			path: "d", kind: policy.KindRego,
			names: []string{"10.rego", "C.REGO", "a.rego", "b.rego"},
		},
		{
			name: "missing path", path: "nope.yaml",
			wantErr: policy.ErrNotFound, errParts: []string{"nope.yaml", "does not exist"},
		},
		{
			name: "missing path is also fs.ErrNotExist", path: "nope.rego",
			wantErr: fs.ErrNotExist,
		},
		{
			name: "unsupported extension", files: map[string]string{"p.json": "{}"}, path: "p.json",
			wantErr: policy.ErrUnsupportedFormat, errParts: []string{"p.json", "expected .yaml, .yml, .rego, or a directory"},
		},
		{
			name: "no extension", files: map[string]string{"policy": "{}"}, path: "policy",
			wantErr: policy.ErrUnsupportedFormat, errParts: []string{"policy:", "unsupported policy format"},
		},
		{
			name: "empty directory", files: map[string]string{"d/readme.md": "no rego here"}, path: "d",
			wantErr: policy.ErrNoRegoFiles, errParts: []string{"contains no .rego files"},
		},
		{
			name: "invalid yaml names the file", files: map[string]string{"p.yaml": "allow: {tool: [x]}"}, path: "p.yaml",
			wantErr: policy.ErrInvalid, errParts: []string{"p.yaml: line 1: unknown key 'tool' in allow"},
		},
		{
			name: "invalid rego in a directory names the file", files: map[string]string{"d/a.rego": rego, "d/b.rego": "package cua.policy\nallow {\n"}, path: "d",
			wantErr: policy.ErrInvalid, errParts: []string{"d: b.rego:3: rego_parse_error: unexpected eof token"},
		},
		{
			name: "too large", files: map[string]string{"p.yaml": "# " + strings.Repeat("x", policy.MaxLayerSize)}, path: "p.yaml",
			wantErr: policy.ErrTooLarge,
		},
		{
			name: "directory too large", files: map[string]string{"d/a.rego": rego + "# " + strings.Repeat("x", policy.MaxLayerSize/2), "d/b.rego": "package cua.x\n# " + strings.Repeat("x", policy.MaxLayerSize/2)}, path: "d",
			wantErr: policy.ErrTooLarge,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			path := filepath.Join(dir, tt.path)
			l, err := policy.Load(path)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Load(%s) = %s layer, want error %v", tt.path, l.Kind(), tt.wantErr)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Load(%s) = %v, want errors.Is %v", tt.path, err, tt.wantErr)
				}
				var le *policy.LoadError
				if !errors.As(err, &le) || le.Path != path {
					t.Errorf("Load(%s) = %#v, want a *LoadError with Path %s", tt.path, err, path)
				}
				for _, part := range tt.errParts {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("Load(%s) = %q, want it to contain %q", tt.path, err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(%s) = %v", tt.path, err)
			}
			if l.Kind() != tt.kind {
				t.Errorf("Load(%s).Kind() = %v, want %v", tt.path, l.Kind(), tt.kind)
			}
			var names []string
			for _, f := range l.Files() {
				names = append(names, f.Name)
				want, err := os.ReadFile(filepath.Join(filepath.Dir(path), tt.path, f.Name))
				if err != nil {
					want, err = os.ReadFile(path)
				}
				if err != nil || string(f.Data) != string(want) {
					t.Errorf("Load(%s) file %s = %q, want the file's bytes %q", tt.path, f.Name, f.Data, want)
				}
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("Load(%s) files = %v, want %v", tt.path, names, tt.names)
			}
			// What Load hashed is what Parse rebuilds from the same bytes.
			again, err := policy.Parse(l.Kind(), l.Files())
			if err != nil {
				t.Fatalf("Parse(Load(%s).Files()) = %v", tt.path, err)
			}
			if again.SHA256() != l.SHA256() {
				t.Errorf("Parse(Files()).SHA256() = %s, want %s", again.SHA256(), l.SHA256())
			}
		})
	}
}

func TestLoadDirectorySummaryInNameOrder(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"b.rego": "package cua.policy\n\nimport data.cua.lib\n\ndefault allow := false\n\nallow if lib.safe[input.tool]\n",
		"a.rego": "package cua.lib\n\nsafe := {\"get_config\"}\n",
	})
	l, err := policy.Load(dir)
	if err != nil {
		t.Fatalf("Load(dir) = %v", err)
	}
	want := "2 modules: a.rego (package cua.lib), b.rego (package cua.policy)"
	if got := l.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	s := policy.NewSet(nil, l)
	if d := s.Decide(t.Context(), "get_config", nil); !d.Allow {
		t.Errorf("Decide(get_config) = %+v, want allow through the helper module", d)
	}
	if d := s.Decide(t.Context(), "click", nil); d.Allow {
		t.Errorf("Decide(click) = %+v, want deny", d)
	}
}

func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := policy.Load(fifo); !errors.Is(err, policy.ErrInvalid) {
		t.Errorf("Load(fifo) = %v, want ErrInvalid without blocking", err)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"managed.yaml": "allow: [get_config, click]",
		"user.rego":    "package cua.policy\n\nallow if input.tool == \"click\"\n",
		"bad.yaml":     "allow: {tools: [x], extra: 1}",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name             string
		managed, user    string
		wantManaged      bool
		wantUser         bool
		wantLayer, parts string
		wantErr          error
	}{
		{name: "none"},
		{name: "managed only", managed: p("managed.yaml"), wantManaged: true},
		{name: "user only", user: p("user.rego"), wantUser: true},
		{name: "both", managed: p("managed.yaml"), user: p("user.rego"), wantManaged: true, wantUser: true},
		{name: "bad managed", managed: p("bad.yaml"), user: p("user.rego"), wantLayer: "managed", wantErr: policy.ErrInvalid,
			parts: "managed policy: " + p("bad.yaml") + ": bad.yaml: line 1: unknown key 'extra' in allow"},
		{name: "missing user", managed: p("managed.yaml"), user: p("nope.yaml"), wantLayer: "user", wantErr: policy.ErrNotFound,
			parts: "user policy: " + p("nope.yaml") + ": configured permission policy path does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := policy.LoadLayers(tt.managed, tt.user)
			if tt.wantErr != nil {
				var le *policy.LoadError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &le) || le.Layer != tt.wantLayer {
					t.Fatalf("LoadLayers() = %v, want a %s-layer %v", err, tt.wantLayer, tt.wantErr)
				}
				if err.Error() != tt.parts && !strings.HasPrefix(err.Error(), tt.parts) {
					t.Errorf("LoadLayers() = %q, want it to start with %q", err, tt.parts)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadLayers() = %v", err)
			}
			if (s.Managed() != nil) != tt.wantManaged || (s.User() != nil) != tt.wantUser {
				t.Errorf("LoadLayers() managed=%v user=%v, want %v %v", s.Managed() != nil, s.User() != nil, tt.wantManaged, tt.wantUser)
			}
		})
	}
}

func TestResolvePaths(t *testing.T) {
	envOf := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	getenv := envOf(map[string]string{
		policy.EnvManagedPolicyFile: "/env/managed.yaml",
		policy.EnvPolicyFile:        "/env/user.rego",
	})
	noenv := func(string) string { return "" }
	tests := []struct {
		name                  string
		managedFlag, userFlag string
		getenv                func(string) string
		wantManaged, wantUser string
		wantErr               string
	}{
		{name: "flags win", managedFlag: "/m.yaml", userFlag: "/u.yaml", getenv: getenv, wantManaged: "/m.yaml", wantUser: "/u.yaml"},
		{name: "environment fills in", getenv: getenv, wantManaged: "/env/managed.yaml", wantUser: "/env/user.rego"},
		{name: "mixed", userFlag: "/u.yaml", getenv: getenv, wantManaged: "/env/managed.yaml", wantUser: "/u.yaml"},
		{name: "nothing configured", getenv: noenv},
		{name: "the reference driver's names", getenv: envOf(map[string]string{
			policy.EnvDriverManagedPolicyFile: "/d/managed.rego", policy.EnvDriverPolicyFile: "/d/user.yaml"}),
			wantManaged: "/d/managed.rego", wantUser: "/d/user.yaml"},
		{name: "both names, same path", getenv: envOf(map[string]string{
			policy.EnvPolicyFile: "/same.yaml", policy.EnvDriverPolicyFile: "/same.yaml"}), wantUser: "/same.yaml"},
		{name: "both names, different paths", getenv: envOf(map[string]string{
			policy.EnvPolicyFile: "/a.yaml", policy.EnvDriverPolicyFile: "/b.yaml"}),
			wantErr: `CUA_HOST_POLICY_FILE="/a.yaml" and CUA_DRIVER_POLICY_FILE="/b.yaml" name different policies`},
		{name: "a flag settles a conflict in the environment", userFlag: "/u.yaml", getenv: envOf(map[string]string{
			policy.EnvPolicyFile: "/a.yaml", policy.EnvDriverPolicyFile: "/b.yaml"}), wantUser: "/u.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, u, err := policy.ResolvePaths(tt.managedFlag, tt.userFlag, tt.getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ResolvePaths() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || m != tt.wantManaged || u != tt.wantUser {
				t.Errorf("ResolvePaths() = %q, %q, %v; want %q, %q", m, u, err, tt.wantManaged, tt.wantUser)
			}
		})
	}
}

func TestParseFiles(t *testing.T) {
	rego := func(name, src string) policy.File { return policy.File{Name: name, Data: []byte(src)} }
	tests := []struct {
		name  string
		kind  policy.Kind
		files []policy.File
		want  string // substring of the error
	}{
		{name: "zero kind", kind: 0, files: []policy.File{rego("a.yaml", "{}")}, want: "unknown policy kind"},
		{name: "yaml needs one file", kind: policy.KindYAML, files: []policy.File{rego("a.yaml", "{}"), rego("b.yaml", "{}")}, want: "exactly one file"},
		{name: "rego needs a file", kind: policy.KindRego, want: "at least one .rego file"},
		{name: "path as name", kind: policy.KindYAML, files: []policy.File{rego("d/a.yaml", "{}")}, want: "not a base name"},
		{name: "empty name", kind: policy.KindYAML, files: []policy.File{rego("", "{}")}, want: "not a base name"},
		{name: "dot dot", kind: policy.KindRego, files: []policy.File{rego("..", "")}, want: "not a base name"},
		{name: "duplicate name", kind: policy.KindRego, files: []policy.File{rego("a.rego", "package a\n"), rego("a.rego", "package b\n")}, want: "appears twice"},
		{name: "extension does not match kind", kind: policy.KindRego, files: []policy.File{rego("a.yaml", "{}")}, want: "does not have a rego extension"},
		{name: "empty rego module", kind: policy.KindRego, files: []policy.File{rego("a.rego", " \n")}, want: "a.rego: empty Rego module"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Parse(tt.kind, tt.files)
			if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse() = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestSHA256(t *testing.T) {
	// Vectors computed independently (Python hashlib) from the documented
	// layout: "cua-host-policy-v1\0" || per file u64be(len name) || name ||
	// u64be(len data) || data.
	tests := []struct {
		name  string
		kind  policy.Kind
		files []policy.File
		want  string
	}{
		{
			name: "yaml", kind: policy.KindYAML,
			files: []policy.File{{Name: "a.yaml", Data: []byte("{}\n")}},
			want:  "130e6af5a00812fc6735364a44442d5a33a5380f8c4d5b3ec74b6272dbad41f4",
		},
		{
			name: "rego files given out of order", kind: policy.KindRego,
			files: []policy.File{
				{Name: "b.rego", Data: []byte("package cua.policy\nallow := true\n")},
				{Name: "a.rego", Data: []byte("package cua.policy\n")},
			},
			want: "38e65f66b19aceea96765ad51ae0c5c85b91957aac456a8007d898b9661c837a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := policy.Parse(tt.kind, tt.files)
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if got := l.SHA256(); got != tt.want {
				t.Errorf("SHA256() = %s, want %s", got, tt.want)
			}
		})
	}

	// The same content under another name is another policy.
	a := parse(t, "a.yaml", "{}\n")
	b := parse(t, "b.yaml", "{}\n")
	if a.SHA256() == b.SHA256() {
		t.Errorf("SHA256(a.yaml) == SHA256(b.yaml) = %s, want different", a.SHA256())
	}
}

func TestParseCopiesFiles(t *testing.T) {
	data := []byte("allow: [click]\n")
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	sum := l.SHA256()
	copy(data, "deny:  [click]\n")
	got := l.Files()
	got[0].Data[0] = 'X'
	if string(l.Files()[0].Data) != "allow: [click]\n" || l.SHA256() != sum {
		t.Errorf("Files() = %q, want the layer unchanged by callers", l.Files()[0].Data)
	}
	if d := policy.NewSet(nil, l).Decide(t.Context(), "click", nil); !d.Allow {
		t.Errorf("Decide(click) = %+v, want allow", d)
	}
}
