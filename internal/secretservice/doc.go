// Package secretservice reads the credentials an operator selected from the person's
// secret store through the freedesktop Secret Service API (org.freedesktop.secrets on the
// person's session bus: gnome-keyring, KeePassXC, KWallet).
//
// Only the items whose attributes match every one of the operator's attributes are
// visible: the store asks the service's SearchItems with them, never for the whole
// keyring. A secret travels from the service encrypted, in a session opened with the
// dh-ietf1024-sha256-aes128-cbc-pkcs7 algorithm, so the plaintext is never in a D-Bus
// message, in the bus daemon or in godbus's buffers; it is decrypted into one buffer the
// caller owns (a credential.Secret) and never becomes a Go string. A locked item is
// refused with credential.ErrLocked: nothing here ever asks the person to unlock it.
// Its credentials are typed only into password fields: the store has no any_field
// exemption, because an item's attributes are written by whatever stored it, not by the
// operator.
//
// The package is not for deciding who may use a secret (the worker's authorizer does
// that), for typing it (x11.Devices.TypeSecret), nor for writing to the store.
package secretservice
