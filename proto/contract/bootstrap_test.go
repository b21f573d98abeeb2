package contract_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
)

func TestBootstrapRoundTrip(t *testing.T) {
	gen := bytes.Repeat([]byte{0xab}, contract.GenerationLen)
	tests := []struct {
		name string
		in   contract.Bootstrap
	}{
		{name: "stdio", in: contract.Bootstrap{Generation: gen, Version: 1}},
		{name: "http", in: contract.Bootstrap{Generation: gen, Version: 3, HTTPToken: strings.Repeat("t", 40)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := tc.in.Encode()
			if err != nil {
				t.Fatalf("Encode(%+v): %v", tc.in, err)
			}
			got, err := contract.ParseBootstrap(strings.TrimSuffix(line, "\n"))
			if err != nil {
				t.Fatalf("ParseBootstrap(%q): %v", line, err)
			}
			if !bytes.Equal(got.Generation, tc.in.Generation) || got.Version != tc.in.Version || got.HTTPToken != tc.in.HTTPToken {
				t.Errorf("ParseBootstrap(Encode(%+v)) = %+v", tc.in, got)
			}
		})
	}
}

func TestParseBootstrapRejects(t *testing.T) {
	gen := strings.Repeat("00", contract.GenerationLen)
	tests := []struct {
		name string
		line string
	}{
		{name: "empty", line: ""},
		{name: "wrong prefix", line: "cua-mcp-proxy/2 generation=" + gen + " version=1"},
		{name: "no generation", line: "cua-mcp-proxy/1 version=1 version=1"},
		{name: "short generation", line: "cua-mcp-proxy/1 generation=00 version=1"},
		{name: "zero version", line: "cua-mcp-proxy/1 generation=" + gen + " version=0"},
		{name: "unknown field", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 mode=x"},
		{name: "empty token", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 http-token="},
		{name: "control in token", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 http-token=a\tb"},
		{name: "trailing space", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := contract.ParseBootstrap(tc.line); err == nil {
				t.Errorf("ParseBootstrap(%q) = %+v, want an error", tc.line, b)
			}
		})
	}
}

// FuzzParseBootstrap: whatever ParseBootstrap accepts, Encode writes back to a line that
// parses to the same value.
func FuzzParseBootstrap(f *testing.F) {
	gen := strings.Repeat("0f", contract.GenerationLen)
	f.Add("cua-mcp-proxy/1 generation=" + gen + " version=1")
	f.Add("cua-mcp-proxy/1 version=2 generation=" + gen + " http-token=" + strings.Repeat("x", 32))
	f.Add("cua-mcp-proxy/1 generation=" + gen)
	f.Fuzz(func(t *testing.T, line string) {
		b, err := contract.ParseBootstrap(line)
		if err != nil {
			return
		}
		again, err := b.Encode()
		if err != nil {
			t.Fatalf("Encode(ParseBootstrap(%q)): %v", line, err)
		}
		b2, err := contract.ParseBootstrap(strings.TrimSuffix(again, "\n"))
		if err != nil || !bytes.Equal(b2.Generation, b.Generation) || b2.Version != b.Version || b2.HTTPToken != b.HTTPToken {
			t.Fatalf("round trip of %q: %+v, %v", line, b2, err)
		}
	})
}

func ExampleBootstrap_Encode() {
	line, err := contract.Bootstrap{Generation: make([]byte, contract.GenerationLen), Version: 1}.Encode()
	if err != nil {
		panic(err)
	}
	fmt.Print(line)
	// Output: cua-mcp-proxy/1 generation=00000000000000000000000000000000 version=1
}
