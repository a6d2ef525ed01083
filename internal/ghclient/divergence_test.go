package ghclient

// Tests that pin deliberate divergences of the retry contract from the
// JavaScript reference (reference-behavior.md §3.6; docs/divergences.md).

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcceptedIsRetried: the reference treats every 2xx as success and
// parses its body (§3.1), so a 202 "job scheduled on GitHub side" would be
// taken as the answer. GitHub answers 202 while it computes a resource and
// the same request later gets the 200 (the statistics endpoints; see
// https://github.com/google/go-github/pull/94); go-github reports it as an
// AcceptedError, and this
// client retries it like a 5xx, so no caller ever decides on the empty body
// of a 202.
func TestAcceptedIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath, reply{status: 202, body: `{}`}, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	assert.Len(t, h.srv.requests(), 2, "the 202 was asked again")
	assert.Equal(t, int64(1), h.c.Stats().Retries)
	eqSleeps(t, h.clock.Sleeps(), ms(500))
}
