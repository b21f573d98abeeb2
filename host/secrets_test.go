package host

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretServiceOptions(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
	sel := map[string]string{"service": "cua-test"}
	for _, tc := range []struct {
		name     string
		opts     Options
		wantAddr string
		wantErr  string
	}{
		{name: "none", opts: Options{}},
		{name: "the host's bus", opts: Options{SecretService: &SecretServiceOptions{Attributes: sel}}, wantAddr: "unix:path=/run/user/1000/bus"},
		{name: "a named bus", opts: Options{SecretService: &SecretServiceOptions{Attributes: sel, BusAddress: "unix:path=/tmp/b"}}, wantAddr: "unix:path=/tmp/b"},
		{name: "no attributes", opts: Options{SecretService: &SecretServiceOptions{}}, wantErr: "whole keyring"},
		{name: "empty name", opts: Options{SecretService: &SecretServiceOptions{Attributes: map[string]string{"": "x"}}}, wantErr: "non-empty"},
		{name: "with a directory", opts: Options{SecretsDir: "/tmp", SecretService: &SecretServiceOptions{Attributes: sel}}, wantErr: "cannot be combined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secretService(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("secretService = %v, %v, want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got.GetBusAddress() != tc.wantAddr {
				t.Fatalf("secretService = %v, %v, want bus %q", got, err, tc.wantAddr)
			}
			if a := got.GetAttributes(); got != nil && (len(a) != 1 || a[0].GetName() != "service" || a[0].GetValue() != "cua-test") {
				t.Fatalf("secretService attributes = %v", got.GetAttributes())
			}
		})
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if _, err := secretService(Options{SecretService: &SecretServiceOptions{Attributes: sel}}); err == nil {
		t.Error("secretService without any session bus = nil error")
	}
}

func TestBusSocketPaths(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{"unix:path=/run/user/1000/bus", []string{"/run/user/1000/bus"}},
		{"unix:path=/tmp/a%20b/bus,guid=00", []string{"/tmp/a b/bus"}},
		{"unix:abstract=/tmp/dbus-x,guid=1;unix:path=/tmp/s", []string{"/tmp/s"}},
		{"tcp:host=localhost,port=1", nil},
		{"unix:path=relative", nil},
	} {
		if got := busSocketPaths(tc.addr); !slices.Equal(got, tc.want) {
			t.Errorf("busSocketPaths(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
