package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables naming the policy files when no flag does.
const (
	// EnvPolicyFile names the user policy file or directory.
	EnvPolicyFile = "CUA_HOST_POLICY_FILE"
	// EnvManagedPolicyFile names the managed (administrator) policy file or
	// directory.
	EnvManagedPolicyFile = "CUA_HOST_MANAGED_POLICY_FILE"

	// EnvDriverPolicyFile and EnvDriverManagedPolicyFile are the reference driver's names
	// for the same files, read when cua-host's own is unset.
	EnvDriverPolicyFile        = "CUA_DRIVER_POLICY_FILE"
	EnvDriverManagedPolicyFile = "CUA_DRIVER_MANAGED_POLICY_FILE"
)

// Layer names, as they appear in Decision.Layer and in messages.
const (
	// LayerManaged is the administrator's layer, evaluated first.
	LayerManaged = "managed"
	// LayerUser is the user's layer, evaluated second.
	LayerUser = "user"
)

// ResolvePaths returns the managed and user policy paths: each flag value
// when it is not empty, otherwise the environment read through getenv —
// cua-host's variable (EnvManagedPolicyFile, EnvPolicyFile), else the reference
// driver's (EnvDriverManagedPolicyFile, EnvDriverPolicyFile). An empty result
// means that layer is not configured. An empty flag never switches off a
// policy set in the environment. Both variables of a layer set to different
// paths is an error: which policy applies must never be a guess.
func ResolvePaths(managedFlag, userFlag string, getenv func(string) string) (managed, user string, err error) {
	managed, user = managedFlag, userFlag
	if managed == "" {
		if managed, err = envPath(getenv, EnvManagedPolicyFile, EnvDriverManagedPolicyFile); err != nil {
			return "", "", err
		}
	}
	if user == "" {
		if user, err = envPath(getenv, EnvPolicyFile, EnvDriverPolicyFile); err != nil {
			return "", "", err
		}
	}
	return managed, user, nil
}

// envPath reads variable own, else alias; both set and different is an error.
func envPath(getenv func(string) string, own, alias string) (string, error) {
	o, a := getenv(own), getenv(alias)
	if o != "" && a != "" && o != a {
		return "", fmt.Errorf("%s=%q and %s=%q name different policies; unset one", own, o, alias, a)
	}
	if o != "" {
		return o, nil
	}
	return a, nil
}

// LoadLayers loads the managed and user layers from their paths ("" means
// not configured) and returns them as a Set. Any configured layer that fails
// to load is an error: a *LoadError naming the layer and the path, e.g.
// "managed policy: /etc/cua/policy.yaml: …". It never falls back to "no
// policy".
func LoadLayers(managedPath, userPath string) (*Set, error) {
	managed, err := loadLayer(LayerManaged, managedPath)
	if err != nil {
		return nil, err
	}
	user, err := loadLayer(LayerUser, userPath)
	if err != nil {
		return nil, err
	}
	return NewSet(managed, user), nil
}

// loadLayer loads one named layer; an empty path is no layer.
func loadLayer(name, path string) (*Layer, error) {
	if path == "" {
		return nil, nil
	}
	l, err := Load(path)
	if err != nil {
		if le, ok := errors.AsType[*LoadError](err); ok {
			le.Layer = name
			return nil, le
		}
		return nil, &LoadError{Layer: name, Path: path, Err: err}
	}
	return l, nil
}

// Load reads and compiles the policy at path: a .yaml or .yml file (YAML),
// a .rego file (Rego), or a directory, whose *.rego files (not recursive,
// extension matched case-insensitively) form one Rego layer in name order.
// Each file is read once, and the layer is built from those bytes with
// Parse. Errors are *LoadError values naming the path; they match
// ErrNotFound (and fs.ErrNotExist), ErrUnsupportedFormat, ErrNoRegoFiles,
// ErrTooLarge or ErrInvalid.
func Load(path string) (*Layer, error) {
	l, err := load(path)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	return l, nil
}

func load(path string) (*Layer, error) {
	if path == "" {
		return nil, &problem{msg: "empty policy path", kind: ErrNotFound}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &problem{msg: "configured permission policy path does not exist", kind: ErrNotFound, cause: err}
	}
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return loadDir(path)
	}
	if !fi.Mode().IsRegular() {
		return nil, invalidf("not a regular file or directory")
	}
	kind, ok := kindOfName(path)
	if !ok {
		return nil, &problem{
			msg:  "unsupported policy format; expected .yaml, .yml, .rego, or a directory",
			kind: ErrUnsupportedFormat,
		}
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(kind, []File{{Name: filepath.Base(path), Data: data}})
}

// loadDir loads every *.rego file directly inside dir, in name order.
func loadDir(dir string) (*Layer, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []File
	total := 0
	for _, e := range entries {
		if !strings.EqualFold(filepath.Ext(e.Name()), ".rego") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p) // follows symlinks
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			continue
		}
		if !fi.Mode().IsRegular() {
			return nil, invalidf("%s is not a regular file", e.Name())
		}
		data, err := readFile(p)
		if err != nil {
			return nil, err
		}
		total += len(data)
		if total > MaxLayerSize {
			return nil, &problem{msg: fmt.Sprintf("policy files exceed %d bytes", MaxLayerSize), kind: ErrTooLarge}
		}
		files = append(files, File{Name: e.Name(), Data: data})
	}
	if len(files) == 0 {
		return nil, &problem{msg: "Rego policy directory contains no .rego files", kind: ErrNoRegoFiles}
	}
	return Parse(KindRego, files)
}

// readFile reads one regular file of at most MaxLayerSize bytes.
func readFile(path string) (data []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, invalidf("%s is not a regular file", filepath.Base(path))
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxLayerSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxLayerSize {
		return nil, &problem{msg: fmt.Sprintf("%s exceeds %d bytes", filepath.Base(path), MaxLayerSize), kind: ErrTooLarge}
	}
	return data, nil
}
