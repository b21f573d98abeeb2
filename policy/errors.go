package policy

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package match one of them with
// errors.Is; their messages carry the details (file, line, tool, argument).
var (
	// ErrNotFound reports a configured policy path that does not exist. It
	// also matches fs.ErrNotExist.
	ErrNotFound = errors.New("policy: path does not exist")

	// ErrUnsupportedFormat reports a path that is neither .yaml, .yml, .rego
	// nor a directory.
	ErrUnsupportedFormat = errors.New("policy: unsupported policy format")

	// ErrNoRegoFiles reports a policy directory without any .rego file.
	ErrNoRegoFiles = errors.New("policy: no .rego files in directory")

	// ErrTooLarge reports a layer whose files exceed MaxLayerSize.
	ErrTooLarge = errors.New("policy: policy too large")

	// ErrInvalid reports policy content that cannot be loaded: a YAML
	// syntax or schema error, a Rego parse, compile or type error, a bad
	// file name.
	ErrInvalid = errors.New("policy: invalid policy")

	// ErrEvaluation reports a policy that failed while deciding one call (a
	// Rego runtime error, a non-boolean result, a cancelled context). The
	// call is denied.
	ErrEvaluation = errors.New("policy: evaluation error")
)

// LoadError reports a policy layer that could not be loaded from a path.
type LoadError struct {
	// Layer is "managed" or "user" when the error comes from LoadLayers,
	// and "" from Load.
	Layer string
	// Path is the configured file or directory.
	Path string
	// Err is the cause; it matches one of the package's sentinel errors.
	Err error
}

// Error reads "managed policy: /etc/cua/policy.yaml: <cause>".
func (e *LoadError) Error() string {
	msg := e.Path + ": " + e.Err.Error()
	if e.Layer != "" {
		msg = e.Layer + " policy: " + msg
	}
	return msg
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// problem is an error whose message is complete on its own and which also
// matches a sentinel (kind) and, when set, an underlying cause.
type problem struct {
	msg   string
	kind  error
	cause error
}

func (p *problem) Error() string { return p.msg }

func (p *problem) Unwrap() []error {
	if p.cause == nil {
		return []error{p.kind}
	}
	return []error{p.kind, p.cause}
}

// invalidf returns an ErrInvalid problem with a formatted message.
func invalidf(format string, args ...any) error {
	return &problem{msg: fmt.Sprintf(format, args...), kind: ErrInvalid}
}
