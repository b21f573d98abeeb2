package cuav1_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// The generated code is checked in two cheap steps and one thorough one:
//
//   - descriptor.sha256 records the SHA-256 of every .proto file that descriptor.binpb
//     (buf build, source info included) was compiled from: a .proto edited without
//     regenerating no longer matches (TestDescriptorMatchesSources);
//   - the .pb.go files are regenerated in-process from descriptor.binpb with the
//     protoc-gen-go of go.mod (the code buf runs as its plugin) and must equal the
//     committed ones byte for byte: a .pb.go edited by hand, or a descriptor.binpb out of
//     step with the code, fails (TestGeneratedCodeIsFresh);
//   - scripts/gen-proto.sh --check compiles the .proto files with buf and compares
//     everything, descriptor.binpb and descriptor.sha256 included. It builds buf through
//     `go run`, which takes minutes on a cold build cache, so the tests (and
//     scripts/test.sh) leave it to whoever changes a .proto.

// TestDescriptorMatchesSources: descriptor.sha256 lists exactly the .proto files of this
// directory with their current SHA-256.
func TestDescriptorMatchesSources(t *testing.T) {
	f, err := os.Open("descriptor.sha256")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recorded := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("descriptor.sha256: malformed line %q", sc.Text())
		}
		recorded[filepath.Base(name)] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sources, err := filepath.Glob("*.proto")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no .proto files here (%v)", err)
	}
	for _, name := range sources {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		switch want, ok := recorded[name]; {
		case !ok:
			t.Errorf("%s is not in descriptor.sha256; run scripts/gen-proto.sh", name)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s changed since descriptor.binpb was built; run scripts/gen-proto.sh", name)
		}
		delete(recorded, name)
	}
	for name := range recorded {
		t.Errorf("descriptor.sha256 lists %s, which does not exist; run scripts/gen-proto.sh", name)
	}
}

// TestGeneratedCodeIsFresh regenerates the Go code from descriptor.binpb as buf does
// (protoc-gen-go, paths=source_relative, output under proto/) and compares it with what
// is committed.
func TestGeneratedCodeIsFresh(t *testing.T) {
	data, err := os.ReadFile("descriptor.binpb")
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		t.Fatalf("descriptor.binpb: %v", err)
	}
	req := &pluginpb.CodeGeneratorRequest{Parameter: proto.String("paths=source_relative"), ProtoFile: set.GetFile()}
	for _, fd := range set.GetFile() {
		// buf build records metadata of its own in an unknown field of each file; buf
		// drops it before it hands the files to a plugin, and so do we.
		fd.ProtoReflect().SetUnknown(nil)
		req.FileToGenerate = append(req.FileToGenerate, fd.GetName())
	}
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatalf("protogen: %v", err)
	}
	for _, f := range gen.Files {
		if f.Generate {
			gengo.GenerateFile(gen, f)
		}
	}
	resp := gen.Response()
	if resp.Error != nil {
		t.Fatalf("protoc-gen-go: %s", resp.GetError())
	}
	var generated []string
	for _, out := range resp.GetFile() {
		name := filepath.Base(out.GetName())
		if filepath.Dir(out.GetName()) != "cua/v1" {
			t.Errorf("protoc-gen-go wrote %s, outside proto/cua/v1", out.GetName())
			continue
		}
		generated = append(generated, name)
		committed, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s is not committed; run scripts/gen-proto.sh", name)
			continue
		}
		if !bytes.Equal(committed, []byte(out.GetContent())) {
			t.Errorf("%s differs from the code generated from descriptor.binpb (edited by hand, or stale); run scripts/gen-proto.sh", name)
		}
	}
	committed, err := filepath.Glob("*.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range committed {
		if !slices.Contains(generated, name) {
			t.Errorf("%s has no .proto source", name)
		}
	}
}
