package policy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Kind is the format of a policy layer.
type Kind int

// Policy formats. The zero Kind is invalid.
const (
	// KindYAML is a single .yaml or .yml file.
	KindYAML Kind = iota + 1
	// KindRego is one or more .rego files (OPA v1 syntax).
	KindRego
)

// String returns "yaml", "rego", or "Kind(n)" for an invalid kind.
func (k Kind) String() string {
	switch k {
	case KindYAML:
		return "yaml"
	case KindRego:
		return "rego"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// MaxLayerSize bounds the total size of one layer's files in bytes. A layer
// travels from the host to the worker inside one control frame, so it must
// stay small.
const MaxLayerSize = 1 << 20

// hashDomain separates the policy hash from every other SHA-256 in cua-host.
const hashDomain = "cua-host-policy-v1\x00"

// driverHashDomain is the reference driver's domain string for the same recipe.
const driverHashDomain = "cua-driver-policy-v1\x00"

// File is one policy file: its base name and its exact contents.
type File struct {
	// Name is the file's base name ("policy.yaml", "10-apps.rego"). Its
	// extension must match the layer's Kind.
	Name string
	// Data is the file's contents.
	Data []byte
}

// Layer is one loaded, compiled policy: immutable, identified by the SHA-256
// of its files, and safe for concurrent use.
type Layer struct {
	kind  Kind
	files []File // sorted by name; owned, never handed out
	sum   string // hex SHA-256 over hashDomain and files

	// Exactly one of these is set, according to kind.
	yaml *yamlPolicy
	rego *regoPolicy
}

// evaluator is what a compiled layer does.
type evaluator interface {
	// decide reports whether the canonical tool with this input is allowed
	// and, when not, why: the reason starts with denied ("Permission denied:
	// user policy: "). Arguments whose key starts with "_" are ignored. A
	// non-nil error denies.
	decide(ctx context.Context, tool string, in input, denied string) (bool, string, error)
	// listed reports whether the tool is allowed with no arguments.
	listed(ctx context.Context, tool string) bool
	// summary describes the layer in one line.
	summary() string
}

// input is what a layer decides on besides the tool name: the call's arguments and the
// resolved target, whose fields are read as a constraint or a Rego layer asks for them.
// The target is held by value, so deciding does not move the caller's target to the heap.
type input struct {
	args map[string]any
	// target is the resolved target when hasTarget is set.
	target    Target
	hasTarget bool
}

// targetOrNil returns the resolved target, nil when there is none.
func (in *input) targetOrNil() *Target {
	if !in.hasTarget {
		return nil
	}
	return &in.target
}

// Parse builds a layer of the given kind from in-memory files: exactly one
// file for KindYAML, one or more for KindRego. It copies the files, so the
// caller may reuse them. Files are ordered by name before hashing and
// compiling, so the order of the argument does not matter. Errors match
// ErrInvalid or ErrTooLarge.
func Parse(kind Kind, files []File) (*Layer, error) {
	if err := checkFiles(kind, files); err != nil {
		return nil, err
	}
	l := &Layer{kind: kind, files: make([]File, len(files))}
	for i, f := range files {
		l.files[i] = File{Name: f.Name, Data: bytes.Clone(f.Data)}
	}
	slices.SortFunc(l.files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	l.sum = hashFiles(hashDomain, l.files)

	var err error
	switch kind {
	case KindYAML:
		l.yaml, err = parseYAML(l.files[0].Name, l.files[0].Data)
	case KindRego:
		l.rego, err = compileRego(l.files)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// checkFiles validates the count, names and size of a layer's files.
func checkFiles(kind Kind, files []File) error {
	switch kind {
	case KindYAML:
		if len(files) != 1 {
			return invalidf("a YAML policy is exactly one file, got %d", len(files))
		}
	case KindRego:
		if len(files) == 0 {
			return invalidf("a Rego policy needs at least one .rego file")
		}
	default:
		return invalidf("unknown policy kind %v", kind)
	}
	seen := make(map[string]bool, len(files))
	total := 0
	for _, f := range files {
		if f.Name == "" || f.Name == "." || f.Name == ".." ||
			strings.ContainsAny(f.Name, "/\\\x00") {
			return invalidf("policy file name %q is not a base name", f.Name)
		}
		if seen[f.Name] {
			return invalidf("policy file %q appears twice", f.Name)
		}
		seen[f.Name] = true
		if k, ok := kindOfName(f.Name); !ok || k != kind {
			return invalidf("policy file %q does not have a %s extension", f.Name, kind)
		}
		total += len(f.Data)
		if total > MaxLayerSize {
			return &problem{
				msg:  fmt.Sprintf("policy files exceed %d bytes", MaxLayerSize),
				kind: ErrTooLarge,
			}
		}
	}
	return nil
}

// kindOfName maps a file extension to a Kind, case-insensitively.
func kindOfName(name string) (Kind, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return KindYAML, true
	case ".rego":
		return KindRego, true
	}
	return 0, false
}

// hashFiles is SHA-256 over domain and, per file in order,
// u64be(len(name)) || name || u64be(len(data)) || data.
func hashFiles(domain string, files []File) string {
	h := sha256.New()
	h.Write([]byte(domain))
	var n [8]byte
	for _, f := range files {
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Name)))
		h.Write(n[:])
		h.Write([]byte(f.Name))
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Data)))
		h.Write(n[:])
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Kind returns the layer's format.
func (l *Layer) Kind() Kind { return l.kind }

// SHA256 returns the layer's identity: the lowercase hex SHA-256 over the
// domain string "cua-host-policy-v1\x00" and, for each file in name order,
// u64be(len(name)) || name || u64be(len(data)) || data.
func (l *Layer) SHA256() string { return l.sum }

// DriverSHA256 returns the digest the reference driver reports for the same files: the
// recipe of SHA256 with the domain string "cua-driver-policy-v1\x00". Operators compare it
// with what the reference's status shows for the same policy.
func (l *Layer) DriverSHA256() string { return hashFiles(driverHashDomain, l.files) }

// Files returns a copy of the layer's files in name order: the exact bytes
// that were hashed and compiled. Parse(l.Kind(), l.Files()) rebuilds an
// equal layer with the same SHA256.
func (l *Layer) Files() []File {
	out := make([]File, len(l.files))
	for i, f := range l.files {
		out[i] = File{Name: f.Name, Data: bytes.Clone(f.Data)}
	}
	return out
}

// Summary describes the layer in one line, e.g. "allow.tools: 2 tools,
// deny.tools: 1 tool, allow.rules: 3 rules for 2 tools" or "2 modules: a.rego
// (package cua.policy), b.rego (package cua.lib)".
func (l *Layer) Summary() string { return l.eval().summary() }

// eval returns the layer's compiled form.
func (l *Layer) eval() evaluator {
	if l.yaml != nil {
		return l.yaml
	}
	return l.rego
}
