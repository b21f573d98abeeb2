package policy_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// TestRegoReferencePolicies: a policy written for the reference driver tests
// input.server == "cua-driver" and decides here as it does there; cua-host's own policies
// keep seeing "cua-host"; input.implementation always names cua-host. The layer's server
// is "cua-driver" when its modules hold the string "cua-driver" and not "cua-host".
func TestRegoReferencePolicies(t *testing.T) {
	reference := regoLayer(t, `package cua.policy

default allow = false

allow if {
	input.server == "cua-driver"
	input.tool in {"click", "get_window_state"}
}
`)
	own := regoLayer(t, `package cua.policy

default allow := false

allow if {
	input.server == "cua-host"
	input.tool == "click"
}
`)
	both := regoLayer(t, `package cua.policy

default allow := false

servers := {"cua-driver", "cua-host"}

allow if {
	input.server in servers
	input.server == "cua-host"
	input.tool == "click"
}
`)
	implementation := regoLayer(t, `package cua.policy

default allow := false

allow if {
	input.server == "cua-driver"
	input.implementation == concat("-", ["cua", "host"])
	input.tool == "zoom"
}
`)
	neither := regoLayer(t, `package cua.policy

default allow := false

allow if input.server == concat("-", ["cua", "host"])
`)
	tests := []struct {
		name  string
		layer *policy.Layer
		tool  string
		allow bool
	}{
		{name: "reference policy allows its tool", layer: reference, tool: "click", allow: true},
		{name: "reference policy allows its other tool", layer: reference, tool: "get_window_state", allow: true},
		{name: "reference policy denies the rest", layer: reference, tool: "kill_app"},
		{name: "cua-host policy", layer: own, tool: "click", allow: true},
		{name: "cua-host policy denies the rest", layer: own, tool: "zoom"},
		{name: "a policy naming both sees cua-host", layer: both, tool: "click", allow: true},
		{name: "a reference policy sees the implementation", layer: implementation, tool: "zoom", allow: true},
		{name: "a reference policy sees the implementation, other tool", layer: implementation, tool: "click"},
		{name: "a policy naming neither sees cua-host", layer: neither, tool: "zoom", allow: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.NewSet(nil, tt.layer).Decide(t.Context(), tt.tool, nil)
			if d.Allow != tt.allow || d.Err != nil {
				t.Errorf("Decide(%s) = %+v, want allow=%v", tt.tool, d, tt.allow)
			}
		})
	}
}

// TestDriverSHA256 checks the reference driver's layer digest against its recipe:
// SHA-256 over "cua-driver-policy-v1\x00" and, per file in name order,
// u64be(len(name)) name u64be(len(data)) data.
func TestDriverSHA256(t *testing.T) {
	dir := writeTree(t, map[string]string{"b.rego": "package cua.lib\n\nx := 1\n", "a.rego": "package cua.policy\n\nallow := true\n"})
	l, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte("cua-driver-policy-v1\x00"))
	for _, f := range []struct{ name, data string }{{"a.rego", "package cua.policy\n\nallow := true\n"}, {"b.rego", "package cua.lib\n\nx := 1\n"}} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f.name)))
		h.Write(n[:])
		h.Write([]byte(f.name))
		binary.BigEndian.PutUint64(n[:], uint64(len(f.data)))
		h.Write(n[:])
		h.Write([]byte(f.data))
	}
	if got, want := l.DriverSHA256(), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("DriverSHA256 = %s, want %s", got, want)
	}
	if l.DriverSHA256() == l.SHA256() {
		t.Error("the two digests are equal: the domain strings differ")
	}
}
