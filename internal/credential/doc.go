// Package credential is where the secrets an operator makes available to a session are
// found: the handles and non-secret attributes an agent may list, and the secret of one
// handle, read only when it is about to be typed into a buffer its reader zeroes.
//
// A secret never becomes a Go string here, is never formatted, logged or encoded, and no
// error names its content or its length. The package is not for deciding who may use a
// secret (the worker's authorizer does that) nor for typing it (x11.Devices.TypeSecret).
package credential
