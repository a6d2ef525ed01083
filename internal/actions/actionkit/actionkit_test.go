package actionkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
)

func TestNewReservationID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		id := actionkit.NewReservationID()
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id)
		require.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
}

func TestParseMillis(t *testing.T) {
	t.Parallel()
	const def = 7 * time.Second
	for _, tc := range []struct {
		raw  string
		want time.Duration
		warn bool
	}{
		{"", def, false},
		{"  ", def, false},
		{"0", 0, false},
		{" 1500 ", 1500 * time.Millisecond, false},
		{"-1", def, true},
		{"1e3", def, true},
		{"31536000000", 365 * 24 * time.Hour, false},
		{"31536000001", def, true},
		{"99999999999999999999", def, true},
	} {
		got, warn := actionkit.ParseMillis("BUILD_LOCK_X_MS", tc.raw, def)
		assert.Equal(t, tc.want, got, "%q", tc.raw)
		if tc.warn {
			assert.Contains(t, warn, "BUILD_LOCK_X_MS", "%q", tc.raw)
		} else {
			assert.Empty(t, warn, "%q", tc.raw)
		}
	}
}

func TestFormatMillis(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "0", actionkit.FormatMillis(-time.Second))
	assert.Equal(t, "0", actionkit.FormatMillis(999*time.Microsecond))
	assert.Equal(t, "1500", actionkit.FormatMillis(1500*time.Millisecond+999*time.Microsecond))
}
