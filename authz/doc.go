// Package authz holds cua-host's authorization model: session modes and the host's
// ceiling, the immutable per-session context, bounded manifests, the reviewed tool
// inventory (risk class, resource, operation, behaviour per mode), consent grants, stable
// refusal codes, and Pipeline, which decides one call: hard invariants, policy, risk
// classification and mode, in that order. docs/security.md describes the model.
//
// The worker runs the pipeline at its one dispatch point; it resolves each call's target
// (which window, which process, which executable) from the desktop and /proc before it
// asks Pipeline.Decide, and it asks the host's consent provider when a decision says so.
// This package decides from values only: it imports policy and nothing that talks to a
// desktop, a process table or a channel, so every decision can be tested on its own.
package authz
