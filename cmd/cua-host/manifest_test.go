package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
)

// TestManifestDescribesEveryTool runs `cua-host manifest` and holds its output to the
// reference's manifest format and to what list-tools offers: every offered tool once, each
// with an error_output_schema that admits a refusal and an error and uses no "const", the
// reference's 25 contract tools among them, and type_text's alias.
func TestManifestDescribesEveryTool(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runManifest(nil, &out, &errb); code != 0 {
		t.Fatalf("manifest exited %d: %s", code, errb.String())
	}
	var m struct {
		ContractVersion string `json:"contract_version"`
		Tools           []struct {
			Name                string          `json:"name"`
			Platforms           []string        `json:"platforms"`
			InputSchema         json.RawMessage `json:"input_schema"`
			SuccessOutputSchema json.RawMessage `json:"success_output_schema"`
			ErrorOutputSchema   json.RawMessage `json:"error_output_schema"`
			OutputSchema        json.RawMessage `json:"output_schema"`
			Aliases             []string        `json:"aliases"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("manifest is not JSON: %v", err)
	}
	if m.ContractVersion != contract.ToolContractVersion {
		t.Errorf("contract_version %q, want %q", m.ContractVersion, contract.ToolContractVersion)
	}

	var listed bytes.Buffer
	if code := runListTools([]string{"--json"}, &listed, &errb); code != 0 {
		t.Fatalf("list-tools exited %d: %s", code, errb.String())
	}
	var lt struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(listed.Bytes(), &lt); err != nil {
		t.Fatal(err)
	}
	var offered, described []string
	for _, x := range lt.Tools {
		offered = append(offered, x.Name)
	}
	for _, x := range m.Tools {
		described = append(described, x.Name)
		if !slices.Equal(x.Platforms, []string{"linux"}) {
			t.Errorf("%s: platforms %v", x.Name, x.Platforms)
		}
		if !json.Valid(x.InputSchema) || !json.Valid(x.ErrorOutputSchema) {
			t.Errorf("%s: an input or error schema is not JSON", x.Name)
		}
		if bytes.Contains(x.ErrorOutputSchema, []byte(`"const"`)) || bytes.Contains(x.OutputSchema, []byte(`"const"`)) {
			t.Errorf("%s: an output schema uses const", x.Name)
		}
		for _, want := range []string{`"refused"`, `"error_code"`, `"window_minimized"`, `"tool_error"`} {
			if !bytes.Contains(x.ErrorOutputSchema, []byte(want)) {
				t.Errorf("%s: error_output_schema lacks %s", x.Name, want)
			}
		}
		if len(x.SuccessOutputSchema) > 0 {
			var adv struct {
				AnyOf []json.RawMessage `json:"anyOf"`
			}
			if err := json.Unmarshal(x.OutputSchema, &adv); err != nil || len(adv.AnyOf) != 3 {
				t.Errorf("%s: output_schema is not anyOf [success, refusal, error]: %s", x.Name, x.OutputSchema)
			}
		}
		if x.Aliases == nil {
			t.Errorf("%s: aliases is null, want a list", x.Name)
		}
	}
	if !slices.Equal(offered, described) {
		t.Errorf("manifest tools %v\nlist-tools    %v", described, offered)
	}
	for _, x := range m.Tools {
		if x.Name == "type_text" && !slices.Equal(x.Aliases, []string{"type_text_chars"}) {
			t.Errorf("type_text aliases %v, want [type_text_chars]", x.Aliases)
		}
	}

	// The reference's contract tools are all described.
	raw, err := os.ReadFile(filepath.Join("..", "..", "test", "conformance", "testdata", "cua-driver-contract", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		ContractVersion string `json:"contract_version"`
		Tools           []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.ContractVersion != contract.ToolContractVersion {
		t.Errorf("the contract files are version %s, cua-host says it follows %s", ref.ContractVersion, contract.ToolContractVersion)
	}
	for _, r := range ref.Tools {
		if !slices.Contains(described, r.Name) {
			t.Errorf("contract tool %s is not in the manifest", r.Name)
		}
	}
	if !strings.Contains(out.String(), `"error_output_schema"`) {
		t.Error("no error_output_schema in the output")
	}
}
