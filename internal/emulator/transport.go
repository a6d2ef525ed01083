package emulator

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Transport returns an in-memory http.RoundTripper that calls the emulator
// directly: no sockets, so it works inside testing/synctest bubbles. The
// request URL's scheme and host only shape the URLs in response bodies.
//
// Like net/http, a request without a User-Agent header is sent as
// "Go-http-client/1.1". Faults surface as transport errors:
// TransportReset → ErrConnectionReset (nothing applied),
// WriteAcceptedResponseLost → ErrResponseLost (request applied), Stall →
// the request context's error once it ends.
func (e *Emulator) Transport() http.RoundTripper { return transport{e} }

type transport struct{ e *Emulator }

// RoundTrip implements http.RoundTripper.
func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", "Go-http-client/1.1")
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp, oc := t.e.process(req)
	switch oc {
	case outcomeLost:
		return nil, ErrResponseLost
	case outcomeReset:
		return nil, ErrConnectionReset
	case outcomeStalled:
		if err := req.Context().Err(); err != nil {
			return nil, err
		}
		return nil, ErrConnectionReset
	}
	h := resp.header.Clone()
	h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", resp.status, http.StatusText(resp.status)),
		StatusCode:    resp.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(resp.body)),
		ContentLength: int64(len(resp.body)),
		Request:       req,
	}, nil
}
