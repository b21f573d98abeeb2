// Command agent-demo is an MCP agent in miniature: it drives a real task end to end through
// `cua-host run` on a private, throwaway X display, with nothing to configure. It builds
// cua-host, starts `cua-host run --display private` as its MCP server over stdio, and with
// the go-sdk MCP client lists the tools, launches a terminal, types a command into it,
// presses Return, confirms the effect by reading the file the command wrote, captures the
// screen with get_desktop_state into a PNG file, and ends the session, printing a short
// transcript as it goes.
//
//	go run ./examples/agent-demo [-out DIR] [-cua-host PATH]
//
// The session runs in the default mode, standard: the private display is the session's own
// (observing it needs no consent), and xterm is a desktop application the system declares,
// launched as declared. cua-host runs with HOME set to the output directory, so the
// terminal's shell starts without the machine's start-up files.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	out := flag.String("out", "", "directory for the terminal's output, the screenshot and cua-host's log (default: a new temporary directory)")
	bin := flag.String("cua-host", "", "the cua-host binary to run (default: build ./cmd/cua-host of this module)")
	flag.Parse()
	if err := run(context.Background(), *out, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "agent-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, bin string) error {
	if out == "" {
		dir, err := os.MkdirTemp("", "cua-agent-demo-")
		if err != nil {
			return err
		}
		out = dir
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if bin == "" {
		if bin, err = build(ctx, out); err != nil {
			return err
		}
	}

	logPath := filepath.Join(out, "cua-host.log")
	cmd := exec.Command(bin, "run", "--display", "private", "--log-file", logPath)
	cmd.Env = append(os.Environ(), "HOME="+out)
	cmd.Stderr = os.Stderr
	fmt.Printf("$ %s\n", strings.Join(cmd.Args, " "))
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cua-agent-demo", Version: "0.1"}, nil).
		Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect to cua-host run (log: %s): %w", logPath, err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	fmt.Printf("← initialize: %s %s, protocol %s\n", init.ServerInfo.Name, init.ServerInfo.Version, init.ProtocolVersion)

	a := &agent{cs: cs}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Printf("→ tools/list\n← %d tools: %s\n", len(names), strings.Join(names, ", "))

	if _, err := a.call(ctx, "health_report", nil); err != nil {
		return err
	}
	launched, err := a.call(ctx, "launch_app", map[string]any{"name": "xterm"})
	if err != nil {
		return err
	}
	var l struct {
		PID       int      `json:"pid"`
		WindowIDs []uint32 `json:"window_ids"`
	}
	if err := decode(launched, &l); err != nil || l.PID == 0 || len(l.WindowIDs) == 0 {
		return fmt.Errorf("launch_app returned no window (%v)", err)
	}
	target := map[string]any{"pid": l.PID, "window_id": l.WindowIDs[0]}

	outFile := filepath.Join(out, "out.txt")
	typed := map[string]any{"text": "echo hello-from-cua > " + outFile}
	for k, v := range target {
		typed[k] = v
	}
	if _, err := a.call(ctx, "type_text", typed); err != nil {
		return err
	}
	key := map[string]any{"key": "Return"}
	for k, v := range target {
		key[k] = v
	}
	if _, err := a.call(ctx, "press_key", key); err != nil {
		return err
	}
	got, err := waitForFile(outFile, 15*time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("✓ the terminal wrote %s: %q\n", outFile, got)

	shot, err := a.callResult(ctx, "get_desktop_state", map[string]any{})
	if err != nil {
		return err
	}
	pngPath := filepath.Join(out, "desktop.png")
	if err := savePNG(shot, pngPath); err != nil {
		return err
	}

	if tools := names; contains(tools, "end_session") {
		if _, err := a.call(ctx, "end_session", nil); err != nil {
			return err
		}
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("cua-host run: %w", err)
	}
	fmt.Printf("✓ closed the session; cua-host run exited with code %d and took its display, terminal and worker with it\n", cmd.ProcessState.ExitCode())
	fmt.Printf("output in %s (out.txt, desktop.png, cua-host.log)\n", out)
	return nil
}

// agent makes tool calls and prints them.
type agent struct {
	cs *mcp.ClientSession
}

// call runs a tool that must complete without error and returns its structuredContent.
func (a *agent) call(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
	res, err := a.callResult(ctx, name, args)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: structuredContent: %w", name, err)
	}
	return m, nil
}

func (a *agent) callResult(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	var shown bytes.Buffer
	enc := json.NewEncoder(&shown)
	enc.SetEscapeHTML(false)
	if args == nil {
		args = map[string]any{}
	}
	_ = enc.Encode(args)
	fmt.Printf("→ tools/call %s %s", name, shown.String())
	start := time.Now()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	outcome, _ := res.Meta["cua-host/outcome"].(string)
	summary := ""
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if summary == "" {
				summary, _, _ = strings.Cut(c.Text, "\n")
			}
		case *mcp.ImageContent:
			summary += fmt.Sprintf(" [%s, %d bytes]", c.MIMEType, len(c.Data))
		}
	}
	fmt.Printf("← %s in %v: %s\n", outcome, time.Since(start).Round(100*time.Microsecond), summary)
	if res.IsError || outcome != "completed" {
		return nil, fmt.Errorf("%s did not complete: %s", name, summary)
	}
	return res, nil
}

func decode(m map[string]any, v any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitForFile waits until path holds a complete line.
func waitForFile(path string, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return string(b), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s was not written within %v (%v)", path, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// savePNG writes the result's image to path after checking that it decodes.
func savePNG(res *mcp.CallToolResult, path string) error {
	for _, c := range res.Content {
		img, ok := c.(*mcp.ImageContent)
		if !ok {
			continue
		}
		decoded, err := png.Decode(bytes.NewReader(img.Data))
		if err != nil {
			return fmt.Errorf("the screenshot is not a PNG: %w", err)
		}
		if err := os.WriteFile(path, img.Data, 0o644); err != nil {
			return err
		}
		b := decoded.Bounds()
		fmt.Printf("✓ saved the screenshot (%dx%d PNG, %d bytes) to %s\n", b.Dx(), b.Dy(), len(img.Data), path)
		return nil
	}
	return errors.New("get_desktop_state returned no image")
}

// build compiles ./cmd/cua-host of the module this program belongs to into dir.
func build(ctx context.Context, dir string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(gomod)) == 0 || string(bytes.TrimSpace(gomod)) == os.DevNull {
		return "", fmt.Errorf("find the module (run from inside the cua-host checkout, or pass -cua-host): %v", err)
	}
	root := filepath.Dir(string(bytes.TrimSpace(gomod)))
	bin := filepath.Join(dir, "cua-host")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cua-host")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Printf("$ go build -o %s ./cmd/cua-host\n", bin)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build cua-host: %w", err)
	}
	return bin, nil
}
