package ghclient

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/go-github/v66/github"
)

// ErrRawTooLarge is GetRaw's answer to a body longer than its limit.
var ErrRawTooLarge = errors.New("ghclient: the response body exceeds its size limit")

// GetRaw GETs apiPath (relative to the client's base URL) with Accept:
// application/vnd.github.raw, the media type GitHub serves file contents
// of any size under (the JSON form carries content only up to 1 MB:
// https://docs.github.com/en/rest/repos/contents#get-repository-content),
// under the retry contract. Each attempt is bounded by timeout (0: by the
// contract alone) and keeps at most limit bytes: a longer body is
// ErrRawTooLarge, so a hostile or runaway document never fills memory.
func (c *Client) GetRaw(ctx context.Context, opName, apiPath string, limit int, timeout time.Duration) ([]byte, error) {
	gh := c.GitHub()
	var w capWriter
	err := c.Do(ctx, Op{Name: opName}, func(ctx context.Context) (*github.Response, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		req, err := gh.NewRequest(http.MethodGet, apiPath, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.github.raw")
		w = capWriter{limit: limit}
		return gh.Do(ctx, req, &w)
	})
	if err != nil {
		return nil, err
	}
	if w.overflow {
		return nil, ErrRawTooLarge
	}
	return w.buf.Bytes(), nil
}

// capWriter keeps at most limit bytes and records an overflow.
type capWriter struct {
	buf      bytes.Buffer
	limit    int
	overflow bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if len(p) > room {
		w.overflow = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}
