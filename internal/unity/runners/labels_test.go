package runners_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

func TestParseLabelSetsAccepts(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		raw  string
		want []runners.LabelSet
	}{
		"one set, lowercased": {`[["self-hosted","Windows","X64","Unity"]]`, []runners.LabelSet{{"self-hosted", "windows", "x64", "unity"}}},
		"two sets":            {`[["self-hosted","linux"],["SELF-HOSTED","macOS","ARM64"]]`, []runners.LabelSet{{"self-hosted", "linux"}, {"self-hosted", "macos", "arm64"}}},
		"surrounding space":   {" \n[ [ \"self-hosted\" ] ]\t", []runners.LabelSet{{"self-hosted"}}},
		"inner space kept":    {`[["self-hosted","unity 6"]]`, []runners.LabelSet{{"self-hosted", "unity 6"}}},
		"unicode label":       {`[["self-hosted","Ünity"]]`, []runners.LabelSet{{"self-hosted", "ünity"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := runners.ParseLabelSets(tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseLabelSetsRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		raw        string
		code       string
		set, label int
	}{
		"empty input":           {``, runners.CodeLabelSetsNotJSON, 0, 0},
		"not json":              {`self-hosted,unity`, runners.CodeLabelSetsNotJSON, 0, 0},
		"trailing data":         {`[["self-hosted"]] []`, runners.CodeLabelSetsNotJSON, 0, 0},
		"invalid utf-8":         {"[[\"self-hosted\",\"\xff\"]]", runners.CodeLabelSetsNotJSON, 0, 0},
		"object":                {`{"labels":["self-hosted"]}`, runners.CodeLabelSetsNotArray, 0, 0},
		"null":                  {`null`, runners.CodeLabelSetsNotArray, 0, 0},
		"flat array":            {`["self-hosted","unity"]`, runners.CodeLabelSetNotArray, 1, 0},
		"outer empty":           {`[]`, runners.CodeLabelSetsEmpty, 0, 0},
		"inner empty":           {`[["self-hosted"],[]]`, runners.CodeLabelSetEmpty, 2, 0},
		"inner null":            {`[null]`, runners.CodeLabelSetNotArray, 1, 0},
		"number label":          {`[["self-hosted",7]]`, runners.CodeLabelNotString, 1, 2},
		"null label":            {`[["self-hosted",null]]`, runners.CodeLabelNotString, 1, 2},
		"empty label":           {`[["self-hosted",""]]`, runners.CodeLabelEmpty, 1, 2},
		"blank label":           {`[["self-hosted","  "]]`, runners.CodeLabelUntrimmed, 1, 2},
		"untrimmed label":       {`[[" self-hosted"]]`, runners.CodeLabelUntrimmed, 1, 1},
		"nbsp untrimmed":        {"[[\"self-hosted\",\"unity\u00a0\"]]", runners.CodeLabelUntrimmed, 1, 2},
		"newline in label":      {`[["self-hosted","uni\nty"]]`, runners.CodeLabelControlCharacter, 1, 2},
		"tab edge":              {`[["self-hosted","\tunity"]]`, runners.CodeLabelControlCharacter, 1, 2},
		"escaped NUL":           {`[["self-hosted","a\u0000b"]]`, runners.CodeLabelControlCharacter, 1, 2},
		"C1 control":            {`[["self-hosted","a\u0085b"]]`, runners.CodeLabelControlCharacter, 1, 2},
		"duplicate label":       {`[["self-hosted","unity","Unity"]]`, runners.CodeLabelDuplicate, 1, 3},
		"no self-hosted":        {`[["self-hosted"],["windows","unity"]]`, runners.CodeLabelSetNoSelfHosted, 2, 0},
		"self-hosted lookalike": {`[["self_hosted","unity"]]`, runners.CodeLabelSetNoSelfHosted, 1, 0},
		"long label":            {`[["self-hosted","` + strings.Repeat("x", runners.MaxLabelBytes+1) + `"]]`, runners.CodeLabelTooLong, 1, 2},
		"too many sets":         {"[" + strings.Repeat(`["self-hosted"],`, runners.MaxLabelSets) + `["self-hosted"]]`, runners.CodeLabelSetsTooMany, 0, 0},
		"too large":             {strings.Repeat(" ", runners.MaxLabelSetsBytes+1), runners.CodeLabelSetsTooLarge, 0, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := runners.ParseLabelSets(tc.raw)
			var le *runners.LabelSetError
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, tc.code, le.Code)
			assert.Equal(t, tc.set, le.Set, "set position")
			assert.Equal(t, tc.label, le.Label, "label position")
			assert.Contains(t, err.Error(), "required-label-sets")
		})
	}
}

// FuzzParseLabelSets: any input either parses into non-empty, lowercase,
// trimmed, control-free, duplicate-free sets that each include
// self-hosted, or is refused with a LabelSetError that does not echo it.
func FuzzParseLabelSets(f *testing.F) {
	for _, seed := range []string{
		`[["self-hosted","Windows","X64","unity"]]`,
		`[["self-hosted"],["self-hosted","linux"]]`,
		`[]`, `[[]]`, `[null]`, `null`, `{}`, `"self-hosted"`,
		`[["self-hosted","UNITY","unity"]]`,
		`[[" self-hosted"]]`,
		`[["self-hosted","a\u0000b"]]`,
		`[["self-hosted","a\nb"]]`,
		`[["self-hosted","\u00a0"]]`,
		"[[\"self-hosted\",\"\xff\xfe\"]]",
		`[["self-hosted",1e400]]`,
		`[["self-hosted"]]]`,
		`[["self-hosted","::error::x"]]`,
		`[["SELF-HOSTED","İ"]]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sets, err := runners.ParseLabelSets(raw)
		if err != nil {
			var le *runners.LabelSetError
			if !errors.As(err, &le) || le.Code == "" {
				t.Fatalf("untyped error %v", err)
			}
			msg := strings.ReplaceAll(err.Error(), `[["self-hosted","Windows","X64","unity"]]`, "")
			if len(raw) > 12 && strings.Contains(msg, raw) {
				t.Fatalf("the error echoes the input: %v", err)
			}
			return
		}
		if len(sets) == 0 {
			t.Fatal("accepted an empty declaration")
		}
		for _, s := range sets {
			if len(s) == 0 {
				t.Fatal("accepted an empty set")
			}
			seen := map[string]bool{}
			hasSelf := false
			for _, l := range s {
				if l == "" || strings.TrimSpace(l) != l || l != strings.ToLower(l) || !utf8.ValidString(l) {
					t.Fatalf("bad label %q", l)
				}
				for _, r := range l {
					if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
						t.Fatalf("control character in %q", l)
					}
				}
				if seen[l] {
					t.Fatalf("duplicate %q", l)
				}
				seen[l] = true
				hasSelf = hasSelf || l == runners.SelfHostedLabel
			}
			if !hasSelf {
				t.Fatalf("set %v without self-hosted", s)
			}
		}
	})
}
