package mcpproxy_test

import (
	"encoding/json"
	"fmt"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/mcpproxy"
)

// A refusal becomes an isError result whose structuredContent is the refusal (status
// "refused", the stable code) and whose _meta carries the outcome.
func ExampleToolResult() {
	res := mcpproxy.ToolResult(client.Result{
		Outcome: client.NotStarted,
		IsError: true,
		Refusal: &client.Refusal{Code: "permission_denied", Message: `tool "clipboard_read" is explicitly denied`},
	})
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	// Output:
	// {"_meta":{"cua-host/outcome":"not_started"},"content":[{"type":"text","text":"permission_denied: tool \"clipboard_read\" is explicitly denied"}],"structuredContent":{"refusal":{"code":"permission_denied","message":"tool \"clipboard_read\" is explicitly denied"},"status":"refused"},"isError":true}
}

// Only loopback addresses are accepted for --http.
func ExampleParseListenAddr() {
	for _, a := range []string{"127.0.0.1:8765", "localhost:8765", "[::1]:8765", "0.0.0.0:8765", "192.168.1.2:8765"} {
		bind, err := mcpproxy.ParseListenAddr(a)
		fmt.Printf("%s -> %q %v\n", a, bind, err != nil)
	}
	// Output:
	// 127.0.0.1:8765 -> "127.0.0.1:8765" false
	// localhost:8765 -> "127.0.0.1:8765" false
	// [::1]:8765 -> "[::1]:8765" false
	// 0.0.0.0:8765 -> "" true
	// 192.168.1.2:8765 -> "" true
}
