package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// JSON-RPC 2.0 error codes used on the control stream.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRefused is a request the host understood and refused: a session or trust domain
	// that does not exist, a mode outside the ceiling, a display in use by another domain.
	CodeRefused = -32000
	// CodeStartFailed is a session that could not be started: the display, the worker or
	// the proxy failed.
	CodeStartFailed = -32001
)

// MaxLine bounds one line of the control stream (an inline manifest fits many times).
const MaxLine = 1 << 20

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

func errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Request is one decoded JSON-RPC request or notification from the app.
type Request struct {
	// ID is the request's id, a JSON string or number as sent; nil for a notification.
	ID json.RawMessage
	// Method names the method.
	Method string
	// Params are the parameters: a JSON object, or nil when absent.
	Params json.RawMessage
}

// IsNotification reports whether the request has no id (no response is sent).
func (r *Request) IsNotification() bool { return r.ID == nil }

// DecodeLine decodes one line of the control stream. On error it returns the id it could
// read (for the error response; nil when there is none) and the JSON-RPC error to send:
// CodeParseError for anything that is not one JSON value, CodeInvalidRequest for a value
// that is not a request object (a batch, a missing or wrong "jsonrpc", a method that is not
// a non-empty string, an id that is not a string or number, unknown members), and
// CodeInvalidParams for params that are not an object.
func DecodeLine(line []byte) (Request, json.RawMessage, *Error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Request{}, nil, errorf(CodeInvalidRequest, "empty line: want one JSON-RPC request object per line")
	}
	if !json.Valid(line) {
		return Request{}, nil, errorf(CodeParseError, "parse error: the line is not valid JSON")
	}
	if line[0] == '[' {
		return Request{}, nil, errorf(CodeInvalidRequest, "batch requests are not supported: send one request object per line")
	}
	if line[0] != '{' {
		return Request{}, nil, errorf(CodeInvalidRequest, "invalid request: want a JSON object, got %s", jsonKind(line))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil {
		return Request{}, nil, errorf(CodeParseError, "parse error: %v", err)
	}
	var req Request
	var id json.RawMessage
	if raw, ok := members["id"]; ok {
		switch k := jsonKind(raw); k {
		case "string", "number":
			id = append(json.RawMessage(nil), raw...)
		default:
			return Request{}, nil, errorf(CodeInvalidRequest, "invalid request: \"id\" must be a string or a number, got %s", k)
		}
	}
	for k := range members {
		switch k {
		case "jsonrpc", "id", "method", "params":
		default:
			return Request{}, id, errorf(CodeInvalidRequest, "invalid request: unknown member %q", k)
		}
	}
	var version string
	if err := json.Unmarshal(members["jsonrpc"], &version); err != nil || version != "2.0" {
		return Request{}, id, errorf(CodeInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"")
	}
	raw, ok := members["method"]
	if !ok {
		return Request{}, id, errorf(CodeInvalidRequest, "invalid request: \"method\" is missing")
	}
	if err := json.Unmarshal(raw, &req.Method); err != nil || jsonKind(raw) != "string" || req.Method == "" {
		return Request{}, id, errorf(CodeInvalidRequest, "invalid request: \"method\" must be a non-empty string")
	}
	if p, ok := members["params"]; ok {
		switch k := jsonKind(p); k {
		case "object":
			req.Params = append(json.RawMessage(nil), p...)
		case "null":
		default:
			return Request{}, id, errorf(CodeInvalidParams, "invalid params: \"params\" must be an object, got %s", k)
		}
	}
	req.ID = id
	return req, id, nil
}

// jsonKind names the kind of a valid JSON value by its first byte.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// lineReader reads the control stream line by line, each at most MaxLine bytes.
type lineReader struct {
	br *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// errLineTooLong is returned for a line longer than MaxLine; the rest of it was skipped.
var errLineTooLong = errors.New("line too long")

// next returns the next line without its newline. A final line without a newline is
// returned before io.EOF.
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine+1 {
			// Skip to the end of this line so the stream stays in step.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// writer writes JSON-RPC messages, one per line; writers take turns.
type writer struct {
	// mu guards the fields below.
	mu  sync.Mutex
	w   io.Writer
	err error // the first write error; later writes are dropped
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

func (w *writer) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("write control stream: %w", err)
	}
	return w.err
}

func (w *writer) result(id json.RawMessage, result any) error {
	if result == nil {
		result = struct{}{}
	}
	return w.write(response{JSONRPC: "2.0", ID: id, Result: result})
}

func (w *writer) fail(id json.RawMessage, e *Error) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	return w.write(response{JSONRPC: "2.0", ID: id, Error: e})
}

func (w *writer) notify(method string, params any) error {
	return w.write(notification{JSONRPC: "2.0", Method: method, Params: params})
}
