package edgesettings_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
)

type coded struct{ code string }

func (c coded) Error() string      { return "coded " + c.code }
func (c coded) ReasonCode() string { return c.code }

// TestProblemsListEveryProblemWithTheFirstCode: no problem is no error; one
// keeps its message; several are counted and joined, the first one's code
// is the reason, and errors.As sees each.
func TestProblemsListEveryProblemWithTheFirstCode(t *testing.T) {
	t.Parallel()
	var p edgesettings.Problems
	p.Add(nil)
	require.NoError(t, p.Err())

	in := &actionio.InputError{Input: "lock-name", Code: actionio.CodeRequired, Message: "is required"}
	p.Add(in)
	require.Equal(t, in.Error(), p.Err().Error())

	p.Add(coded{"owner-not-caller"})
	p.Add(errors.New("plain"))
	err := p.Err()
	assert.Equal(t, "3 invalid settings: input lock-name: is required [input-required]; coded owner-not-caller; plain", err.Error())
	var e *edgesettings.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "input-required", e.ReasonCode())
	assert.Equal(t, []string{"input-required", "owner-not-caller", ""}, e.Codes())
	var got *actionio.InputError
	require.ErrorAs(t, err, &got)
	assert.Same(t, in, got)
}

// TestInputsAndFiles: the hyphen spelling wins over the underscore one; the
// settled files serve only the file-command variables.
func TestInputsAndFiles(t *testing.T) {
	t.Parallel()
	env := map[string]string{"INPUT_LOCK-NAME": "a", "INPUT_LOCK_NAME": "b", "INPUT_OTHER_ONE": "c",
		"GITHUB_OUTPUT": "/o", "GITHUB_STEP_SUMMARY": "/s", "GITHUB_STATE": "/st", "GITHUB_TOKEN": "secret"}
	getenv := func(k string) string { return env[k] }
	assert.Equal(t, "a", edgesettings.Input(getenv, "lock-name"))
	assert.Equal(t, "c", edgesettings.Input(getenv, "other-one"))
	assert.Empty(t, edgesettings.Input(getenv, "absent"))
	f := edgesettings.ReadFiles(getenv)
	assert.Equal(t, edgesettings.Files{Output: "/o", Summary: "/s", State: "/st"}, f)
	assert.Equal(t, "/o", f.Getenv("GITHUB_OUTPUT"))
	assert.Empty(t, f.Getenv("GITHUB_TOKEN"))
}
