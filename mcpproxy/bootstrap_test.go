package mcpproxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
)

var testGen = []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func TestBootstrapRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   contract.Bootstrap
	}{
		{name: "stdio", in: contract.Bootstrap{Generation: testGen, Version: 1}},
		{name: "http", in: contract.Bootstrap{Generation: testGen, Version: 7, HTTPToken: testToken}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := tc.in.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !strings.HasSuffix(line, "\n") {
				t.Fatalf("Encode = %q, want a line", line)
			}
			got, err := parseBootstrap(strings.TrimSuffix(line, "\n"))
			if err != nil {
				t.Fatalf("parseBootstrap(%q): %v", line, err)
			}
			if !bytes.Equal(got.Generation, tc.in.Generation) || got.Version != tc.in.Version || got.HTTPToken != tc.in.HTTPToken {
				t.Errorf("parseBootstrap(Encode(%+v)) = %+v", tc.in, got)
			}
		})
	}
	for _, bad := range []contract.Bootstrap{
		{Generation: testGen[:15], Version: 1},
		{Generation: testGen},
		{Generation: testGen, Version: 1, HTTPToken: "a b"},
	} {
		if line, err := bad.Encode(); err == nil {
			t.Errorf("Encode(%+v) = %q, want an error", bad, line)
		}
	}
}

func TestParseBootstrap(t *testing.T) {
	gen := "000102030405060708090a0b0c0d0e0f"
	tests := []struct {
		name string
		line string
		ok   bool
	}{
		{name: "minimal", line: "cua-mcp-proxy/1 generation=" + gen + " version=1", ok: true},
		{name: "fields in any order", line: "cua-mcp-proxy/1 version=1 generation=" + gen, ok: true},
		{name: "with token", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 http-token=" + testToken, ok: true},
		{name: "wrong prefix", line: "cua-mcp-proxy/2 generation=" + gen + " version=1"},
		{name: "empty", line: ""},
		{name: "no version", line: "cua-mcp-proxy/1 generation=" + gen},
		{name: "zero version", line: "cua-mcp-proxy/1 generation=" + gen + " version=0"},
		{name: "short generation", line: "cua-mcp-proxy/1 generation=0001 version=1"},
		{name: "repeated field", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 version=2"},
		{name: "unknown field", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 mode=unrestricted"},
		{name: "short token", line: "cua-mcp-proxy/1 generation=" + gen + " version=1 http-token=abc"},
		{name: "double space", line: "cua-mcp-proxy/1  generation=" + gen + " version=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBootstrap(tc.line)
			if (err == nil) != tc.ok {
				t.Errorf("parseBootstrap(%q) err = %v, want ok=%v", tc.line, err, tc.ok)
			}
		})
	}
}

func FuzzParseBootstrap(f *testing.F) {
	f.Add("cua-mcp-proxy/1 generation=000102030405060708090a0b0c0d0e0f version=1")
	f.Add("cua-mcp-proxy/1 generation=000102030405060708090a0b0c0d0e0f version=1 http-token=" + testToken)
	f.Add("cua-mcp-proxy/1 version=4294967296 generation=zz")
	f.Fuzz(func(t *testing.T, line string) {
		b, err := parseBootstrap(line)
		if err != nil {
			return
		}
		if len(b.Generation) != 16 || b.Version == 0 {
			t.Fatalf("parseBootstrap(%q) accepted %+v", line, b)
		}
		if b.HTTPToken != "" && CheckToken(b.HTTPToken) != nil {
			t.Fatalf("parseBootstrap(%q) accepted a bad token", line)
		}
	})
}
