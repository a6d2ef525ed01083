package doctor_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/doctor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// noRequests is a transport that fails the test on any request.
type noRequests struct {
	t *testing.T
	n atomic.Int64
}

func (r *noRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	r.t.Errorf("request sent with invalid settings: %s %s", req.Method, req.URL)
	return nil, errors.New("no request may be sent")
}

// TestBadCredentialsAreAllReportedWithoutRequests: with both Apps'
// credentials invalid, every finding is reported in one run and nothing is
// sent; a malformed repository is refused before anything else.
func TestBadCredentialsAreAllReportedWithoutRequests(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		lockaction.EnvAppID:         "writer",
		lockaction.EnvAppPrivateKey: "key",
		lockaction.EnvReaderAppID:   "7",
	}
	api := &noRequests{t: t}
	o := doctor.Options{Repository: "acme/build-lock", Getenv: func(k string) string { return env[k] }, Transport: api}
	results, err := doctor.Run(context.Background(), o)
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, doctor.Render(&text, results))
	assert.Contains(t, text.String(), lockaction.EnvAppID+" is not a positive App id")
	assert.Contains(t, text.String(), lockaction.EnvReaderAppID+" and "+lockaction.EnvReaderAppKey+" are not set")
	assert.True(t, doctor.Failed(results))
	assert.Zero(t, api.n.Load(), "requests sent")

	o.Repository = "not-a-repository"
	_, err = doctor.Run(context.Background(), o)
	assert.ErrorIs(t, err, doctor.ErrUsage)
	assert.Zero(t, api.n.Load(), "requests sent")
}
