package strictyaml

import (
	"errors"
	"testing"

	"go.yaml.in/yaml/v3"
)

// walk walks src's root as a mapping of mappings under opts and returns the kind of the
// first problem (0 for none).
func walk(opts Options, src string) Kind {
	var got *Problem
	opts.Error = func(p *Problem) error { got = p; return errors.New(p.Kind.String()) }
	w := New(opts)
	root, err := w.Document([]byte(src))
	if err == nil {
		// What fails is recorded in got by opts.Error; the returned error only stops the walk.
		_ = w.Mapping(root, "", []string{"a", "b"}, func(_ string, _, v *yaml.Node) error {
			if v, err := w.Node(v, ""); err != nil || v.Kind != yaml.SequenceNode {
				return err
			}
			return w.Sequence(v, "list", func(int, *yaml.Node) error { return nil })
		})
	}
	if got == nil {
		return 0
	}
	return got.Kind
}

func TestWalk(t *testing.T) {
	strict := Options{}
	loose := Options{Aliases: true, NullIsEmpty: true, Budget: 20}
	for _, tc := range []struct {
		name string
		opts Options
		src  string
		want Kind
	}{
		{name: "fine", opts: strict, src: "a: [1, 2]\nb: x\n"},
		{name: "empty", opts: strict, src: "", want: KindEmpty},
		{name: "null", opts: strict, src: "~\n", want: KindEmpty},
		{name: "syntax", opts: strict, src: "a: [\n", want: KindSyntax},
		{name: "second document", opts: strict, src: "a: 1\n---\nb: 2\n", want: KindSecondDocument},
		{name: "not a mapping", opts: strict, src: "[1]\n", want: KindNotMapping},
		{name: "unknown key", opts: strict, src: "c: 1\n", want: KindUnknownKey},
		{name: "duplicate key", opts: strict, src: "a: 1\na: 2\n", want: KindDuplicateKey},
		{name: "key not a string", opts: strict, src: "1: 1\n", want: KindKeyNotString},
		{name: "merge key", opts: strict, src: "<<: {a: 1}\n", want: KindMergeKey},
		{name: "anchor refused", opts: strict, src: "a: &x [1]\nb: *x\n", want: KindAlias},
		{name: "anchor in a list refused", opts: strict, src: "a: [&x 1]\n", want: KindAlias},
		{name: "alias resolved", opts: loose, src: "a: &x [1]\nb: *x\n"},
		{name: "budget", opts: loose, src: "a: &x [1, 2, 3, 4, 5, 6, 7, 8]\nb: *x\n", want: KindTooComplex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := walk(tc.opts, tc.src); got != tc.want {
				t.Errorf("walk(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}
