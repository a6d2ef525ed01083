package ghclient

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetRawAsksForTheRawMediaTypeAndCapsTheBody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	accept := func(t *testing.T, r *http.Request, _ []byte) {
		assert.Equal(t, "application/vnd.github.raw", r.Header.Get("Accept"))
	}
	const doc = `{"schemaVersion":3}`
	h.srv.on("GET", "/repos/o/r/contents/locks/x.json",
		reply{status: 200, body: doc, check: accept},
		reply{status: 200, body: doc, check: accept},
		reply{status: 404, body: msg("Not Found")})

	b, err := h.c.GetRaw(context.Background(), "GET raw", "repos/o/r/contents/locks/x.json", len(doc), 0)
	require.NoError(t, err)
	assert.Equal(t, doc, string(b), "a body of exactly the limit is kept whole")

	_, err = h.c.GetRaw(context.Background(), "GET raw", "repos/o/r/contents/locks/x.json", len(doc)-1, 0)
	require.ErrorIs(t, err, ErrRawTooLarge, "one byte over the limit is refused, not truncated")

	_, err = h.c.GetRaw(context.Background(), "GET raw", "repos/o/r/contents/locks/x.json", 1<<20, 0)
	assert.True(t, IsNotFound(err))
}
