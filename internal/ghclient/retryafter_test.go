package ghclient

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// RetryAfter is parseRetryAfter over the header the shield may have moved
// (a 403's Retry-After travels as X-Buildlock-Retry-After).
func TestRetryAfterReadsTheShieldedHeader(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		h           http.Header
		wait        time.Duration
		present, ok bool
	}{
		{"absent", http.Header{}, 0, false, false},
		{"plain", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true, true},
		{"stashed", http.Header{"X-Buildlock-Retry-After": {"9"}}, 9 * time.Second, true, true},
		{"stash wins", http.Header{"X-Buildlock-Retry-After": {"9"}, "Retry-After": {"1"}}, 9 * time.Second, true, true},
		{"date", http.Header{"Retry-After": {"Mon, 02 Jun 2025 12:00:30 GMT"}}, 30 * time.Second, true, true},
		{"malformed", http.Header{"Retry-After": {"soon"}}, 0, true, false},
	} {
		wait, present, ok := RetryAfter(tc.h, now)
		assert.Equal(t, tc.wait, wait, tc.name)
		assert.Equal(t, tc.present, present, tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
	}
}
