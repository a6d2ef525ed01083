package policy

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func legStrings(legs []matrixLeg) []string {
	var out []string
	for _, l := range legs {
		var kv []string
		for k, v := range l {
			kv = append(kv, strings.TrimPrefix(k, "matrix.")+"="+v)
		}
		sort.Strings(kv)
		out = append(out, strings.Join(kv, ","))
	}
	sort.Strings(out)
	return out
}

// TestExpandMatrix: the legs GitHub generates, as its documentation
// describes them ("Expanding or adding matrix configurations": include
// merges into every original combination it does not contradict, else
// becomes a leg of its own; exclude is applied first; at most 256 jobs).
func TestExpandMatrix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
		ok   bool
	}{
		{"the documentation's include example", `
fruit: [apple, pear]
animal: [cat, dog]
include:
  - color: green
  - color: pink
    animal: cat
  - fruit: apple
    shape: circle
  - fruit: banana
  - fruit: banana
    animal: cat
`, []string{
			"animal=cat,color=pink,fruit=apple,shape=circle",
			"animal=cat,color=pink,fruit=pear",
			"animal=cat,fruit=banana",
			"animal=dog,color=green,fruit=apple,shape=circle",
			"animal=dog,color=green,fruit=pear",
			"fruit=banana",
		}, true},
		{"exclude by a partial combination", "a: [1, 2]\nb: [3, 4]\nexclude:\n  - a: 1\n  - {a: 2, b: 4}\n", []string{"a=2,b=3"}, true},
		{"include adds back an excluded leg", "a: [1, 2]\nexclude:\n  - a: 1\ninclude:\n  - a: 1\n", []string{"a=1", "a=2"}, true},
		{"include only", "include:\n  - a: 42\n  - a: foo\n", []string{"a=42", "a=foo"}, true},
		{"numbers as GitHub renders them", "v: [3.1, 3.10, 10, true, \"3.10\"]\n", []string{"v=10", "v=3.1", "v=3.1", "v=3.10", "v=true"}, true},
		{"object values", "os: [{name: win, arch: x64}]\n", []string{"os.arch=x64,os.name=win,os=Object"}, true},
		{"keys are case-insensitive", "Unity-Version: [a]\n", []string{"unity-version=a"}, true},
		{"an expression", "${{ fromJSON(needs.a.outputs.m) }}", nil, false},
		{"an axis from an expression", "a: ${{ fromJSON(vars.A) }}\n", nil, false},
		{"a value from an expression", "a: [x, '${{ vars.B }}']\n", nil, false},
		{"more than 256 legs", "a: [" + strings.Repeat("x,", 16) + "x]\nb: [" + strings.Repeat("y,", 15) + "y]\n", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := rawRoot([]byte("m: " + indentBlock(tc.yaml)))
			require.NotNil(t, root)
			legs, _, ok := expandMatrix(rawGet(root, "m"))
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, legStrings(legs))
			}
		})
	}
}

func indentBlock(s string) string {
	s = strings.TrimPrefix(s, "\n")
	if !strings.Contains(s, "\n") {
		return s
	}
	return "\n  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// FuzzExpandMatrix: any YAML as a matrix expands without a panic, to at
// most 256 legs, the same way twice.
func FuzzExpandMatrix(f *testing.F) {
	for _, s := range []string{"a: [1, 2]\nb: [x]\n", "include:\n  - a: 1\n", "a: [1]\nexclude:\n  - a: 1\n", "${{ x }}", "a: {b: c}", "[1, 2]", "a: [[1]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		root := rawRoot([]byte("m:\n  " + strings.ReplaceAll(s, "\n", "\n  ")))
		m := rawGet(root, "m")
		if m == nil {
			return
		}
		legs, _, ok := expandMatrix(m)
		legs2, _, ok2 := expandMatrix(m)
		if ok != ok2 || len(legs) != len(legs2) {
			t.Fatal("not deterministic")
		}
		if ok && len(legs) > maxMatrixLegs {
			t.Fatalf("%d legs", len(legs))
		}
	})
}
