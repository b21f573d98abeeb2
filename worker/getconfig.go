package worker

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
)

// registerConfig adds get_config, and the session_bus capability (whether the D-Bus
// session bus that AT-SPI is reached through accepts connections) to health_report and
// Ready.
func (w *worker) registerConfig(reg *tool.Registry) {
	reg.AddCapability(probeSessionBus(os.Getenv("DBUS_SESSION_BUS_ADDRESS")))
	reg.Register(tool.Tool{
		Name:         "get_config",
		Description:  "Report the effective configuration this session runs under: mode and expiry, policy layers and their SHA-256, the display, the host's ceiling and the worker's limits. Read-only: the host fixes it.",
		InputSchema:  []byte(labelSchema),
		Annotations:  tool.InventoryAnnotations("get_config"),
		OutputSchema: tool.OutputSchema("get_config"),
		Quick:        true,
		Args:         tool.NewArgs[labelArgs],
		Handler:      w.getConfig,
	})
}

// configReport is get_config's structured result.
type configReport struct {
	Session configSession `json:"session"`
	Policy  configPolicy  `json:"policy"`
	Display configDisplay `json:"display"`
	Ceiling configCeiling `json:"ceiling"`
	Limits  configLimits  `json:"limits"`
	// ProtocolVersion is the negotiated session protocol version.
	ProtocolVersion uint32 `json:"protocol_version"`
	// ToolContractVersion is the reference driver's tool contract version cua-host's tools
	// follow (contract.ToolContractVersion).
	ToolContractVersion string `json:"tool_contract_version"`
}

type configSession struct {
	Label          string `json:"label"`
	Mode           string `json:"mode"`
	ExpiresAt      string `json:"expires_at"`
	IdleTimeout    string `json:"idle_timeout"`
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
}

// configPolicy names the policy layers the host shipped in Hello; a nil layer is not
// configured (that stage passes every call).
type configPolicy struct {
	Managed *configLayer `json:"managed"`
	User    *configLayer `json:"user"`
}

type configLayer struct {
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256"`
}

type configDisplay struct {
	Name      string `json:"name"`
	Private   bool   `json:"private"`
	ServerPID int32  `json:"server_pid,omitempty"`
}

type configCeiling struct {
	AllowedModes             []string `json:"allowed_modes"`
	UnrestrictedAcknowledged bool     `json:"unrestricted_acknowledged"`
	MaxSessionTTL            string   `json:"max_session_ttl"`
	MaxIdleTTL               string   `json:"max_idle_ttl"`
}

type configLimits struct {
	MaxControlFrameBytes int    `json:"max_control_frame_bytes"`
	MaxSessionFrameBytes int    `json:"max_session_frame_bytes"`
	DefaultDeadline      string `json:"default_deadline"`
	DefaultDeadlineMS    int64  `json:"default_deadline_ms"`
	MaxInFlight          int    `json:"max_in_flight"`
}

func (w *worker) getConfig(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	// Only the session label, which changes nothing here.
	if _, err := tool.ArgsOf[labelArgs](call); err != nil {
		return nil, err
	}
	w.mu.Lock()
	s := w.sessions[call.Session.Label]
	w.mu.Unlock()
	if s == nil || s.state != call.Session {
		return nil, fmt.Errorf("session %q is gone", call.Session.Label)
	}
	layer := func(kind, sum string) *configLayer {
		if sum == "" {
			return nil
		}
		return &configLayer{Kind: kind, SHA256: sum}
	}
	pol := w.hello.GetPolicy()
	disp := w.hello.GetDisplay()
	modes := make([]string, 0, len(w.ceiling.AllowedModes))
	for _, m := range w.ceiling.AllowedModes {
		modes = append(modes, m.String())
	}
	r := configReport{
		Session: configSession{
			Label: s.label, Mode: s.authority.Mode.String(), ExpiresAt: s.authority.Expires.UTC().Format(time.RFC3339),
			IdleTimeout: s.authority.IdleTTL.String(), ManifestSHA256: s.authority.ManifestSHA256,
		},
		Policy: configPolicy{
			Managed: layer(pol.GetManaged().GetKind(), pol.GetManaged().GetSha256()),
			User:    layer(pol.GetUser().GetKind(), pol.GetUser().GetSha256()),
		},
		Display: configDisplay{Name: disp.GetName(), Private: disp.GetPrivate(), ServerPID: disp.GetServerPid()},
		Ceiling: configCeiling{
			AllowedModes: modes, UnrestrictedAcknowledged: w.ceiling.UnrestrictedAcknowledged,
			MaxSessionTTL: w.ceiling.MaxSessionTTL.String(), MaxIdleTTL: w.ceiling.MaxIdleTTL.String(),
		},
		Limits: configLimits{
			MaxControlFrameBytes: wire.MaxControlFrame, MaxSessionFrameBytes: wire.MaxSessionFrame,
			DefaultDeadline: w.cfg.DefaultDeadline.String(), DefaultDeadlineMS: w.cfg.DefaultDeadline.Milliseconds(),
			MaxInFlight: w.cfg.MaxInFlight,
		},
		ProtocolVersion:     w.version,
		ToolContractVersion: contract.ToolContractVersion,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session %s: mode %s, expires %s, idle timeout %s", r.Session.Label, r.Session.Mode, r.Session.ExpiresAt, r.Session.IdleTimeout)
	if r.Session.ManifestSHA256 != "" {
		fmt.Fprintf(&b, ", manifest sha256 %s", r.Session.ManifestSHA256)
	}
	for _, l := range []struct {
		name string
		l    *configLayer
	}{{"managed", r.Policy.Managed}, {"user", r.Policy.User}} {
		if l.l == nil {
			fmt.Fprintf(&b, "\n%s policy: not configured", l.name)
		} else {
			fmt.Fprintf(&b, "\n%s policy: %s sha256 %s", l.name, l.l.Kind, l.l.SHA256)
		}
	}
	fmt.Fprintf(&b, "\ndisplay %s (private %t)", r.Display.Name, r.Display.Private)
	fmt.Fprintf(&b, "\nceiling: modes %s, session ttl ≤ %s, idle ttl ≤ %s", strings.Join(modes, ","), r.Ceiling.MaxSessionTTL, r.Ceiling.MaxIdleTTL)
	fmt.Fprintf(&b, "\ntool contract %s, session protocol %d", r.ToolContractVersion, r.ProtocolVersion)
	fmt.Fprintf(&b, "\nlimits: default deadline %s, %d calls in flight, session frames ≤ %d bytes", r.Limits.DefaultDeadline, r.Limits.MaxInFlight, r.Limits.MaxSessionFrameBytes)
	return tool.TextResult(b.String(), r), nil
}

// probeSessionBus reports whether the D-Bus session bus at addr (a DBUS_SESSION_BUS_ADDRESS
// value) accepts a connection. It only connects: the AT-SPI backend asks the bus for the
// accessibility bus itself.
func probeSessionBus(addr string) tool.Capability {
	c := tool.Capability{Name: "session_bus"}
	if addr == "" {
		c.Detail = "DBUS_SESSION_BUS_ADDRESS is not set: no AT-SPI accessibility"
		return c
	}
	var lastErr error
	for _, a := range strings.Split(addr, ";") {
		kind, params, ok := strings.Cut(a, ":")
		if !ok || kind != "unix" {
			continue
		}
		for _, kv := range strings.Split(params, ",") {
			k, v, _ := strings.Cut(kv, "=")
			var sock string
			switch k {
			case "path":
				sock = v
			case "abstract":
				sock = "@" + v
			default:
				continue
			}
			conn, err := net.DialTimeout("unix", unescapeDBus(sock), 200*time.Millisecond)
			if err != nil {
				lastErr = err
				continue
			}
			conn.Close()
			c.Available = true
			c.Detail = "accepts connections; AT-SPI is reached through it"
			return c
		}
	}
	c.Detail = "no unix socket in DBUS_SESSION_BUS_ADDRESS accepts connections"
	if lastErr != nil {
		c.Detail += ": " + lastErr.Error()
	}
	return c
}

// unescapeDBus undoes D-Bus address value escaping (%XX).
func unescapeDBus(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &v); err == nil {
				b.WriteByte(v)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
