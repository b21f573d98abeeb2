package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandHelp: `cua-host <command> --help` and -h print the command's usage to stdout
// and exit 0, as Go programs do; a bad flag still exits 2 with the message on stderr.
func TestCommandHelp(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a line of the usage, or "" for none
		stderr string
	}{
		{name: "run --help", args: []string{"run", "--help"}, code: 0, stdout: "-display"},
		{name: "run -h", args: []string{"run", "-h"}, code: 0, stdout: "-call-timeout"},
		{name: "call --help", args: []string{"call", "--help"}, code: 0, stdout: "-timeout"},
		{name: "call -h", args: []string{"call", "-h"}, code: 0, stdout: "-display"},
		{name: "inventory --help", args: []string{"inventory", "--help"}, code: 0, stdout: "-json"},
		{name: "inventory -h", args: []string{"inventory", "-h"}, code: 0, stdout: "-markdown"},
		{name: "policy check -h", args: []string{"policy", "check", "-h"}, code: 0, stdout: "-managed-policy"},
		{name: "policy eval --help", args: []string{"policy", "eval", "--help"}, code: 0, stdout: "-policy"},
		{name: "journal -h", args: []string{"journal", "-h"}, code: 0, stdout: "journal verify"},
		{name: "journal verify -h", args: []string{"journal", "verify", "-h"}, code: 0, stdout: "-json"},
		{name: "journal show --help", args: []string{"journal", "show", "--help"}, code: 0, stdout: "-o"},
		{name: "journal verify bad flag", args: []string{"journal", "verify", "--yaml", "d"}, code: 2, stderr: "flag provided but not defined: -yaml"},
		{name: "run bad flag", args: []string{"run", "--no-such-flag"}, code: 2, stderr: "flag provided but not defined: -no-such-flag"},
		{name: "call bad flag", args: []string{"call", "--timeout", "soon", "noop"}, code: 2, stderr: "invalid value"},
		{name: "inventory bad flag", args: []string{"inventory", "--yaml"}, code: 2, stderr: "flag provided but not defined: -yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("run(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout.String(), stderr.String())
			}
			if tt.stdout != "" && !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("run(%q) stdout = %q, want the usage (%q)", tt.args, stdout.String(), tt.stdout)
			}
			if tt.code == 0 && stderr.Len() != 0 {
				t.Errorf("run(%q) stderr = %q, want nothing", tt.args, stderr.String())
			}
			if tt.stderr != "" && !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.stderr)
			}
			if tt.code != 0 && stdout.Len() != 0 {
				t.Errorf("run(%q) stdout = %q, want nothing on a usage error", tt.args, stdout.String())
			}
		})
	}
}
