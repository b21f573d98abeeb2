package desktop

import (
	"context"
	"errors"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/credential"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// Credentials is the store find_credentials lists and type_secret reads from: the
// credentials directory the host handed the worker (credential.Dir), or the operator's
// selection of the person's Secret Service (secretservice.Store).
type Credentials interface {
	List(credential.Filter) ([]credential.Entry, error)
	Read(handle string) (*credential.Secret, error)
}

// AnyFieldStore is a Credentials store whose operator may let a credential be typed
// outside password fields (credential.Dir, through credential.AnyFieldAttribute). A store
// that does not implement it keeps every credential to password fields.
type AnyFieldStore interface {
	// AnyField reports whether handle may be typed into any focused element.
	AnyField(handle string) (bool, error)
}

// noStore is the refusal of both tools when the host configured no credential store.
const noStore = "the host made no credentials available to this session; the operator names a credentials directory with --secrets-dir, or selects items of the person's secret store with --secret-service"

func (d *desk) secretSpecs() []spec {
	find := map[string]prop{
		"query": boundedStr("Case-insensitive part of the credential's label or handle.", 256),
		"attributes": prop{"type": "object", "additionalProperties": prop{"type": "string"}, "maxProperties": 16,
			"description": `Non-secret attributes every result must have with exactly these values, e.g. {"url": "https://mail.example"}.`},
	}
	typ := targetProps(map[string]prop{"handle": boundedStr("The credential to type, a handle from find_credentials.", credential.MaxHandleBytes)})
	return []spec{
		{name: "find_credentials", description: "List the credentials the operator made available to this session: each one's handle, label and non-secret attributes (never the secret, nor its length). Type one with type_secret.",
			schema: schema(nil, find), handler: d.findCredentials, args: tool.NewArgs[findCredentialsArgs]},
		{name: "type_secret", description: "Type a credential's secret into the focused window or into pid/window_id, like type_text, without the secret appearing in the arguments, the result or any log: the worker reads it at this moment and forgets it once the keys are sent. " +
			"It types only while the window's keyboard focus is on a password field (accessible role \"password text\": a login form's password input, a password dialog); anywhere else it is refused permission_denied with nothing typed, unless the operator allowed that credential in any field. Click or focus the password field first. The result says only whether it was typed.",
			schema: schema([]string{"handle"}, typ), handler: d.typeSecret, args: tool.NewArgs[typeSecretArgs]},
	}
}

// findCredentialsArgs are find_credentials' arguments.
type findCredentialsArgs struct {
	Query      string `json:"query"`
	Attributes any    `json:"attributes"`
	Session    string `json:"session"`
}

func (d *desk) findCredentials(_ context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[findCredentialsArgs](call)
	if err != nil {
		return nil, err
	}
	if d.creds == nil {
		return nil, authz.Refuse(authz.CodeUnsupported, noStore)
	}
	f := credential.Filter{Query: a.Query}
	if a.Attributes != nil {
		m, ok := a.Attributes.(map[string]any)
		if !ok {
			return nil, invalid("attributes must be an object of strings")
		}
		f.Attributes = make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, invalid("attribute %q must be a string", k)
			}
			f.Attributes[k] = s
		}
	}
	es, err := d.creds.List(f)
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(es))
	for _, e := range es {
		attrs := map[string]any{}
		for k, v := range e.Attributes {
			attrs[k] = v
		}
		list = append(list, map[string]any{"handle": e.Handle, "label": e.Label, "attributes": attrs})
	}
	text := "no credentials match"
	switch len(es) {
	case 0:
	case 1:
		text = "1 credential: " + es[0].Handle
	default:
		text = "credentials:"
		for _, e := range es {
			text += " " + e.Handle
		}
	}
	return result(text, map[string]any{"credentials": list}), nil
}

// typeSecretArgs are type_secret's arguments.
type typeSecretArgs struct {
	targetArgs
	Handle string `json:"handle"`
}

// typeSecret types a credential's secret through the same keyboard path as type_text,
// into a focused password field unless the operator allowed the credential anywhere
// (secretfield.go). The secret is read only once the target is resolved and is known to
// show a password field, right before it is focused, is never a string, and is zeroed as
// soon as the keys are sent. The result and every error name the handle at most, never a
// character or the length of the secret. There is no accessibility route: AT-SPI would
// carry the text as a D-Bus string.
func (d *desk) typeSecret(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[typeSecretArgs](call)
	if err != nil {
		return nil, err
	}
	if a.Handle == "" {
		return nil, invalid("handle is required")
	}
	if d.creds == nil {
		return nil, authz.Refuse(authz.CodeUnsupported, noStore)
	}
	if !credential.ValidHandle(a.Handle) {
		return nil, authz.Refuse(authz.CodeCredentialNotFound, "no credential has that handle (a handle is one name from find_credentials, never a path); nothing was typed")
	}
	win, err := d.keyTarget(ctx, call.Window, a.targetArgs)
	if err != nil {
		return nil, err
	}
	dl, err := d.deliveryFor(ctx, call, a.Delivery)
	if err != nil {
		return nil, err
	}
	anyField := false
	if st, ok := d.creds.(AnyFieldStore); ok {
		if anyField, err = st.AnyField(a.Handle); err != nil {
			return nil, err
		}
	}
	if !anyField {
		if err := d.hasPasswordField(ctx, win); err != nil {
			return nil, err
		}
	}
	// Read before anything is focused, so that a refusal leaves everything as it was.
	secret, err := d.creds.Read(a.Handle)
	switch {
	case errors.Is(err, credential.ErrNotFound):
		return nil, authz.Refuse(authz.CodeCredentialNotFound, "no credential has the handle %q; nothing was typed. List them with find_credentials", a.Handle)
	case errors.Is(err, credential.ErrLocked):
		return nil, authz.Refuse(authz.CodeUnsupported, "the keyring holding credential %q is locked; nothing was typed. cua-host never asks to unlock it: the person unlocks the keyring", a.Handle)
	case errors.Is(err, credential.ErrTooLarge):
		return nil, invalid("credential %q is too large to type (the limit is %d bytes); nothing was typed", a.Handle, credential.MaxSecretBytes)
	case err != nil:
		return nil, err
	}
	defer secret.Wipe()
	ev := map[string]any{}
	if err := d.keysReady(ctx, call, dl, win, ev); err != nil {
		return nil, err
	}
	guards := d.keyGuards(dl, win)
	var field *atspi.Element
	if !anyField {
		// The window has the focus now; its focused element must be a password field,
		// and still be one under the input lock.
		if field, err = d.focusedPasswordField(ctx, win); err != nil {
			dl.finish(ctx, ev)
			return nil, err
		}
		guards = append(guards, d.stillFocused(field, win))
	}
	_, err = dl.dev.TypeSecret(ctx, secret.Bytes(), guards...)
	secret.Wipe()
	if err != nil {
		dl.finish(ctx, ev)
		if errors.Is(err, x11.ErrInvalidArgument) || errors.Is(err, x11.ErrNoKeycode) {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "credential %q has a character that cannot be typed on this display; nothing was typed", a.Handle)
		}
		return nil, err
	}
	if field != nil {
		ev["password_field"] = d.fieldAfter(ctx, field)
	} else {
		ev["password_field"] = map[string]any{"checked": "no: the operator allows this credential in any field (" + credential.AnyFieldAttribute + ")"}
	}
	dl.finish(ctx, ev)
	return keyResult(dl, "typed the secret of "+a.Handle, 1, ev, map[string]any{"handle": a.Handle}), nil
}
