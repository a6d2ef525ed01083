package liveness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatParent(t *testing.T) {
	t.Parallel()
	p, err := parseStatParent([]byte("4242 (Runner.Worker) S 4200 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0"))
	require.NoError(t, err)
	assert.Equal(t, Parent{PPID: 4200, Name: "Runner.Worker"}, p)
	p, err = parseStatParent([]byte("7 (a) (b c)) R 1 7 7 0 -1 0"))
	require.NoError(t, err)
	assert.Equal(t, Parent{PPID: 1, Name: "a) (b c)"}, p)
	for _, bad := range []string{"", "7 a R 1", "7 (x) R", "7 (x) R -3", "7 (x) R one"} {
		_, err := parseStatParent([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}
