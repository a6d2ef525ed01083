package classify_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classify"
)

func TestRunDispatchesTheMode(t *testing.T) {
	t.Parallel()
	var ran []string
	modes := map[string]classify.Entry{
		"changes": func(context.Context, actionkit.Deps) error { ran = append(ran, "changes"); return nil },
		"cleanup-evidence": func(context.Context, actionkit.Deps) error {
			ran = append(ran, "cleanup-evidence")
			return errors.New("boom")
		},
	}
	deps := actionkit.Deps{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}}
	require.NoError(t, classify.Run(context.Background(), modes, []string{"changes"}, deps))
	assert.EqualError(t, classify.Run(context.Background(), modes, []string{"cleanup-evidence"}, deps), "boom")
	assert.Equal(t, []string{"changes", "cleanup-evidence"}, ran)

	for name, args := range map[string][]string{"no mode": nil, "unknown": {"evidence"}, "extra": {"changes", "x"}, "empty": {""}} {
		err := classify.Run(context.Background(), modes, args, deps)
		assert.ErrorIs(t, err, classify.ErrMode, name)
		assert.ErrorContains(t, err, "the modes are: changes, cleanup-evidence", name)
	}
	assert.Len(t, ran, 2, "a bad mode runs nothing")
}

func TestModesServeTheClassifierActions(t *testing.T) {
	t.Parallel()
	assert.Contains(t, classify.Modes, "changes")
}
