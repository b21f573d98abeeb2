package mcpproxy

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/docs"
)

// guideCodes returns the codes of the agent guide's refusal table: the first cell of each
// row of the table under "## Refusal codes".
func guideCodes(t *testing.T) []string {
	t.Helper()
	_, section, ok := strings.Cut(docs.AgentGuide, "\n## Refusal codes\n")
	if !ok {
		t.Fatal("docs/agent-guide.md has no \"## Refusal codes\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var codes []string
	for _, line := range strings.Split(section, "\n") {
		rest, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		code, _, ok := strings.Cut(rest, "` |")
		if !ok {
			t.Errorf("refusal table row %q: the first cell is not one code", line)
			continue
		}
		codes = append(codes, code)
	}
	return codes
}

// TestGuideCoversEveryCode: the agent guide's refusal table has one row for every code a
// refusal can carry (refusalCodes, which TestRefusalCodesAreAuthzCodes holds to package
// authz and the contract) and no row for a code that does not exist; the tool-level error
// codes are explained too. A new refusal code fails here until the guide says what it
// means and what to do next.
func TestGuideCoversEveryCode(t *testing.T) {
	rows := guideCodes(t)
	for _, code := range refusalCodes {
		switch n := len(slices.DeleteFunc(slices.Clone(rows), func(r string) bool { return r != code })); n {
		case 0:
			t.Errorf("docs/agent-guide.md has no row for refusal code %q", code)
		case 1:
		default:
			t.Errorf("docs/agent-guide.md has %d rows for refusal code %q", n, code)
		}
	}
	for _, code := range rows {
		if !slices.Contains(refusalCodes, code) {
			t.Errorf("docs/agent-guide.md has a row for %q, which is no refusal code", code)
		}
	}
	for _, code := range errorCodes {
		if !slices.Contains(refusalCodes, code) && !strings.Contains(docs.AgentGuide, "`"+code+"`") {
			t.Errorf("docs/agent-guide.md does not explain the tool-level error code %q", code)
		}
	}
	for _, outcome := range []string{"not_started", "completed", "unknown"} {
		if !strings.Contains(docs.AgentGuide, "| `"+outcome+"` |") {
			t.Errorf("docs/agent-guide.md's outcome table has no row for %q", outcome)
		}
	}
}

// TestGuideResource: through the go-sdk client, resources/list lists the guide once and
// resources/read returns it whole as markdown; another URI is not found.
func TestGuideResource(t *testing.T) {
	p := New(fakeCaller{}, Options{Logger: testLogger(t)})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "guide-test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		ss.Wait()
	}()
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || caps.Tools == nil {
		t.Errorf("initialize capabilities = %+v, want tools and resources", caps)
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != GuideURI || list.Resources[0].MIMEType != "text/markdown" ||
		list.Resources[0].Size != int64(len(docs.AgentGuide)) {
		t.Fatalf("resources/list = %+v, want the guide alone (%s, text/markdown, %d bytes)", list.Resources, GuideURI, len(docs.AgentGuide))
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: GuideURI})
	if err != nil {
		t.Fatalf("resources/read %s: %v", GuideURI, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].Text != docs.AgentGuide || res.Contents[0].MIMEType != "text/markdown" || res.Contents[0].URI != GuideURI {
		t.Errorf("resources/read %s = %d contents, want the guide's %d bytes as text/markdown", GuideURI, len(res.Contents), len(docs.AgentGuide))
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "cua-host://guide/other"}); err == nil {
		t.Error("resources/read of an unknown URI succeeded")
	}
}
