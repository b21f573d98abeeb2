// Package policy is cua-host's permission policy engine: it loads the
// operator's YAML or Rego policy files into immutable layers and decides,
// for one tool call at a time, whether the managed layer and then the user
// layer allow it.
//
// A policy is loaded once per process (Load, LoadLayers), or rebuilt from the
// exact bytes another process loaded (Parse, Layer.Files), which is how the
// host hands its policy to a worker: what is hashed (Layer.SHA256) is what is
// compiled. A Set holds the two layers and is safe for concurrent use; it
// never changes after NewSet. With no layer configured every call passes this
// stage; with a layer configured, anything the layer does not allow is denied.
//
// Formats:
//
//   - YAML (.yaml, .yml): deny.tools, allow.tools and allow.rules with
//     per-argument constraints (min, max, max_length, pattern, allowed).
//     Unknown keys are rejected everywhere.
//   - Rego (.rego, or a directory of .rego files): the boolean rule
//     data.cua.policy.allow in OPA v1 syntax, prepared once at load, with
//     every nondeterministic or network builtin (and print/trace) removed.
//
// docs/policy.md describes both formats with worked examples.
//
// What this package is not for: it does not know the tool inventory, risk
// classes, session modes or manifests (package authz does), it does not
// decide hard invariants such as "never target the host", and it imports
// nothing else from cua-host. The authorization pipeline sanitizes a call
// once (authz.Sanitize) and decides through DecideSanitized; Decide and
// DecideTarget canonicalize the tool name themselves, for callers such as
// `cua-host policy eval` that hand it a call as written.
package policy
