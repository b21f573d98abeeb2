// Package tool defines what a tool is to the worker — a name, a schema, annotations and a
// handler — and the registry that holds them. Handlers never see a channel, a policy or a
// mode: the worker authorizes every call before it looks a handler up here, and turns the
// handler's return into an outcome.
//
// A handler's return decides the outcome the caller sees:
//   - (*Result, nil): COMPLETED (Result.IsError marks a tool-level failure after effects);
//   - an *authz.Refusal: NOT_STARTED — return it only before anything was touched;
//   - any other error: COMPLETED with is_error, unless the call's context was done when the
//     handler returned, in which case UNKNOWN (the effect may be half done).
package tool
