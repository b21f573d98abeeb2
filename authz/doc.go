// Package authz holds cua-host's authorization vocabulary and decisions: session modes, the
// host's ceiling, stable refusal codes and the per-call pipeline the worker runs at its one
// dispatch point. It imports policy and nothing that talks to a desktop or a channel.
package authz
