package jsinput_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
)

func io(env map[string]string) *actionio.IO {
	return actionio.New(func(k string) string { return env[k] }, &bytes.Buffer{})
}

func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	t.Parallel()
	a := io(map[string]string{
		"INPUT_BOM": "\ufeff yes \ufeff", "INPUT_NEL": "\u0085yes", "INPUT_BLANK": " \u3000\ufeff",
		"INPUT_MODE": "\ufeffcanonical", "X": "\t/tmp\u2028",
	})
	assert.Equal(t, "yes", jsinput.Input(a, "bom"), "U+FEFF is JavaScript whitespace")
	assert.Equal(t, "\u0085yes", jsinput.Input(a, "nel"), "U+0085 is not")
	assert.Equal(t, "/tmp", jsinput.Value(a.Getenv("X")))
	_, err := jsinput.Required(a, "blank")
	var ie *actionio.InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, actionio.CodeRequired, ie.Code)
	re := regexp.MustCompile(`^(canonical|other)$`)
	v, err := jsinput.Pattern(a, "mode", "", re)
	require.NoError(t, err)
	assert.Equal(t, "canonical", v)
	v, err = jsinput.Pattern(a, "absent", "other", re)
	require.NoError(t, err)
	assert.Equal(t, "other", v)
	_, err = jsinput.Pattern(a, "nel", "", re)
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, actionio.CodePatternMismatch, ie.Code)
	assert.NotContains(t, err.Error(), "yes", "never the value")
	_, err = jsinput.Pattern(a, "blank", "", re)
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, actionio.CodeRequired, ie.Code)
}
