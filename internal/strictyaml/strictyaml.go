// Package strictyaml walks yaml.v3 node trees strictly, for the small configuration files
// cua-host reads (capability manifests and YAML policies): one document, string keys that
// are unique and among the expected ones, no merge keys, and either no anchors and aliases
// at all or aliases resolved within a node budget.
//
// It reports structure only. The caller turns each Problem into its own error with its own
// message (Options.Error), and decodes scalars itself. It is not a general YAML decoder.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Kind says what is wrong with a document.
type Kind int

// Kinds of Problem.
const (
	// KindSyntax: the YAML does not parse; Problem.Err is the parser's error.
	KindSyntax Kind = iota + 1
	// KindEmpty: no document, or a null one.
	KindEmpty
	// KindSecondDocument: the input holds more than one document.
	KindSecondDocument
	// KindNotOneDocument: the document node does not hold exactly one node.
	KindNotOneDocument
	// KindTooComplex: more nodes were visited than Options.Budget allows.
	KindTooComplex
	// KindAlias: an anchor or alias where Options.Aliases refuses them.
	KindAlias
	// KindNotMapping: a mapping was expected.
	KindNotMapping
	// KindNotSequence: a list was expected.
	KindNotSequence
	// KindMergeKey: a merge key (<<).
	KindMergeKey
	// KindKeyNotString: a key that is not a string.
	KindKeyNotString
	// KindUnknownKey: a key outside the expected ones.
	KindUnknownKey
	// KindDuplicateKey: a key that appears twice in one mapping.
	KindDuplicateKey
)

var kindNames = [...]string{
	KindSyntax: "syntax", KindEmpty: "empty", KindSecondDocument: "second document",
	KindNotOneDocument: "not one document", KindTooComplex: "too complex", KindAlias: "alias",
	KindNotMapping: "not a mapping", KindNotSequence: "not a list", KindMergeKey: "merge key",
	KindKeyNotString: "key not a string", KindUnknownKey: "unknown key", KindDuplicateKey: "duplicate key",
}

// String names the kind.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one structural problem the walker found.
type Problem struct {
	Kind Kind
	// Node is where the problem is; nil for KindSyntax and for KindEmpty without a document.
	Node *yaml.Node
	// Field is the name the caller gave the mapping or list being walked. For KindAlias on
	// a mapping's value or a list's item it is the value's path: field.key or field[i].
	Field string
	// Key is the offending key (KindUnknownKey, KindDuplicateKey).
	Key string
	// Keys are the keys the mapping accepts (KindNotMapping, KindUnknownKey); nil when any
	// key is accepted.
	Keys []string
	// FirstLine is the line of the key's first occurrence (KindDuplicateKey).
	FirstLine int
	// Err is the parser's error (KindSyntax).
	Err error
}

// Options configure a Walker.
type Options struct {
	// Aliases resolves aliases wherever a node is visited; false refuses every anchor and
	// alias (KindAlias).
	Aliases bool
	// NullIsEmpty lets a null stand for an empty mapping or list.
	NullIsEmpty bool
	// Budget bounds the nodes visited, each alias expansion counted again, so aliases
	// cannot make the walk much larger than the file; 0 means no bound.
	Budget int
	// Error turns a Problem into the caller's error, with the caller's message. Required.
	Error func(*Problem) error
}

// Walker walks one document. It is not safe for concurrent use; make one per parse.
type Walker struct {
	opts   Options
	visits int
}

// New returns a Walker for one document. It panics if opts.Error is nil.
func New(opts Options) *Walker {
	if opts.Error == nil {
		panic("strictyaml: Options.Error is nil")
	}
	return &Walker{opts: opts}
}

func (w *Walker) fail(p Problem) error { return w.opts.Error(&p) }

// Document parses data and returns the root node of its only document: not null, and with
// an alias at the root resolved when aliases are allowed.
func (w *Walker) Document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, w.fail(Problem{Kind: KindEmpty})
		}
		return nil, w.fail(Problem{Kind: KindSyntax, Err: err})
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, w.fail(Problem{Kind: KindSyntax, Err: err})
	default:
		return nil, w.fail(Problem{Kind: KindSecondDocument, Node: &next})
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, w.fail(Problem{Kind: KindNotOneDocument, Node: &doc})
	}
	root := doc.Content[0]
	if w.opts.Aliases {
		var err error
		if root, err = w.Node(root, ""); err != nil {
			return nil, err
		}
	}
	if IsNull(root) {
		return nil, w.fail(Problem{Kind: KindEmpty, Node: root})
	}
	return root, nil
}

// Node charges a visit of n to the budget and returns it, an alias resolved; when aliases
// are refused, an anchor or alias on n is a KindAlias problem at field.
func (w *Walker) Node(n *yaml.Node, field string) (*yaml.Node, error) {
	return w.visit(n, func() string { return field })
}

// visit is Node with the field computed only for a problem.
func (w *Walker) visit(n *yaml.Node, field func() string) (*yaml.Node, error) {
	w.visits++
	if w.opts.Budget > 0 && w.visits > w.opts.Budget {
		return nil, w.fail(Problem{Kind: KindTooComplex, Node: n})
	}
	if !w.opts.Aliases {
		if n.Kind == yaml.AliasNode || n.Anchor != "" {
			return nil, w.fail(Problem{Kind: KindAlias, Node: n, Field: field()})
		}
		return n, nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n, nil
}

// IsNull reports whether n is an explicit or empty null.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Mapping calls fn for each entry of the mapping n in file order. Keys must be unique
// strings and, when keys is not nil, among keys. field names n in problems. When aliases
// are allowed the values are passed to fn as written (fn resolves them with Node); when
// they are refused, each value has been checked for anchors and aliases.
func (w *Walker) Mapping(n *yaml.Node, field string, keys []string, fn func(key string, k, v *yaml.Node) error) error {
	n, err := w.open(n, yaml.MappingNode, Problem{Kind: KindNotMapping, Field: field, Keys: keys})
	if n == nil || err != nil {
		return err
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k, err = w.Node(k, field); err != nil {
			return err
		}
		if !w.opts.Aliases {
			if _, err := w.visit(v, func() string { return join(field, k.Value) }); err != nil {
				return err
			}
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			return w.fail(Problem{Kind: KindMergeKey, Node: k, Field: field})
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return w.fail(Problem{Kind: KindKeyNotString, Node: k, Field: field})
		}
		if line, dup := seen[k.Value]; dup {
			return w.fail(Problem{Kind: KindDuplicateKey, Node: k, Field: field, Key: k.Value, FirstLine: line})
		}
		seen[k.Value] = k.Line
		if keys != nil && !slices.Contains(keys, k.Value) {
			return w.fail(Problem{Kind: KindUnknownKey, Node: k, Field: field, Key: k.Value, Keys: keys})
		}
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// Sequence calls fn for each item of the list n, in order, each item visited (an alias
// resolved, or refused). field names n in problems.
func (w *Walker) Sequence(n *yaml.Node, field string, fn func(i int, item *yaml.Node) error) error {
	n, err := w.open(n, yaml.SequenceNode, Problem{Kind: KindNotSequence, Field: field})
	if n == nil || err != nil {
		return err
	}
	for i, item := range n.Content {
		item, err := w.visit(item, func() string { return fmt.Sprintf("%s[%d]", field, i) })
		if err != nil {
			return err
		}
		if err := fn(i, item); err != nil {
			return err
		}
	}
	return nil
}

// open visits n, a mapping or list of kind, and returns it; nil (and no error) when it is
// a null that stands for an empty one. A node of another kind is the problem notKind.
func (w *Walker) open(n *yaml.Node, kind yaml.Kind, notKind Problem) (*yaml.Node, error) {
	n, err := w.Node(n, notKind.Field)
	if err != nil {
		return nil, err
	}
	if w.opts.NullIsEmpty && IsNull(n) {
		return nil, nil
	}
	if n.Kind != kind {
		notKind.Node = n
		return nil, w.fail(notKind)
	}
	return n, nil
}

// join returns the path of key under field ("" is the root).
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
