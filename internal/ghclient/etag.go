package ghclient

import (
	"bytes"
	"container/list"
	"io"
	"net/http"
	"sync"
)

// HeaderCache marks a response this package synthesised from its ETag cache.
// Its value is CacheRevalidated when GitHub answered 304 Not Modified and the
// cached 200 body was served instead.
const (
	// HeaderCache is the marker header on synthesised responses.
	HeaderCache = "X-Buildlock-Cache"
	// CacheRevalidated is HeaderCache's value after a 304.
	CacheRevalidated = "revalidated"
)

// Cache bounds. Contents API reads inline files up to 1 MiB (base64 inflates
// that by a third), so 4 MiB per entry is generous; 64 entries covers every
// URL a single action run polls.
const (
	// DefaultETagCacheEntries is the LRU size when Config leaves it 0.
	DefaultETagCacheEntries = 64
	maxCachedBodyBytes      = 4 << 20
)

// etagEntry is the last 200 seen for one (URL, Accept) pair.
type etagEntry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

// etagCache is a small LRU of etagEntry values.
type etagCache struct {
	mu  sync.Mutex
	max int
	ll  *list.List
	m   map[string]*list.Element
}

func newETagCache(max int) *etagCache {
	if max <= 0 {
		max = DefaultETagCacheEntries
	}
	return &etagCache{max: max, ll: list.New(), m: make(map[string]*list.Element)}
}

func (c *etagCache) get(key string) *etagEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.ll.MoveToFront(el)
		return el.Value.(*etagEntry)
	}
	return nil
}

func (c *etagCache) put(e *etagEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[e.key]; ok {
		el.Value = e
		c.ll.MoveToFront(el)
		return
	}
	c.m[e.key] = c.ll.PushFront(e)
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*etagEntry).key)
	}
}

func (c *etagCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.ll.Remove(el)
		delete(c.m, key)
	}
}

func (c *etagCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// etagTransport makes GETs conditional (notes B.6: a 304 does not count
// against the primary rate limit). It sits below go-github and above the
// auth layer: it remembers the ETag and body of each 200 per URL and Accept
// value, sends If-None-Match on the next GET, and turns a 304 into a copy of
// the cached 200 (go-github would otherwise report 304 as an error) carrying
// the 304's fresh headers (request id, rate limits) and HeaderCache. A GET
// that already carries a conditional or Range header passes through
// untouched. ETags are token-specific on GitHub, so after a token re-mint
// the first GET simply gets a full 200 again.
type etagTransport struct {
	next  http.RoundTripper
	cache *etagCache
	stats *statsCounter
}

func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" ||
		req.Header.Get("If-Modified-Since") != "" || req.Header.Get("Range") != "" {
		return t.next.RoundTrip(req)
	}
	key := req.URL.String() + "\x00" + req.Header.Get("Accept")
	entry := t.cache.get(key)
	out := req
	if entry != nil {
		out = req.Clone(req.Context())
		out.Header.Set("If-None-Match", entry.etag)
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && entry != nil:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		h := entry.header.Clone()
		for k, v := range resp.Header {
			switch k {
			case "Content-Length", "Content-Encoding", "Transfer-Encoding", "Content-Type":
				continue
			}
			h[k] = append([]string(nil), v...)
		}
		h.Set(HeaderCache, CacheRevalidated)
		t.stats.notModified()
		return &http.Response{
			Status:        "200 OK",
			StatusCode:    http.StatusOK,
			Proto:         resp.Proto,
			ProtoMajor:    resp.ProtoMajor,
			ProtoMinor:    resp.ProtoMinor,
			Header:        h,
			Body:          io.NopCloser(bytes.NewReader(entry.body)),
			ContentLength: int64(len(entry.body)),
			Request:       req,
			TLS:           resp.TLS,
		}, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedBodyBytes+1))
		if err != nil {
			_ = resp.Body.Close()
			return nil, err
		}
		if len(body) > maxCachedBodyBytes {
			// Too large to remember: hand back the whole stream.
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			t.cache.remove(key)
			return resp, nil
		}
		_ = resp.Body.Close()
		t.cache.put(&etagEntry{key: key, etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body})
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		return resp, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		t.cache.remove(key)
	}
	return resp, nil
}

// CachedResponse is a 200 the client's ETag cache holds for one GET: what a
// later step of the same job may seed its own cache with
// (Client.SeedCachedResponse) so its first read of that URL is conditional.
// GitHub's ETags are token-specific, so that read is answered 304 only when
// the step uses the same token and the resource has not changed; the body is
// then served from the seed, and the caller must trust the seed as it would
// the earlier step's read (lockaction authenticates it).
type CachedResponse struct {
	// URL and Accept are the GET's (the cache's key).
	URL    string      `json:"url"`
	Accept string      `json:"accept"`
	ETag   string      `json:"etag"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body"`
}

// CachedResponse returns the cache's 200 for a GET of url with accept, if
// the client has an ETag cache and holds one.
func (c *Client) CachedResponse(url, accept string) (CachedResponse, bool) {
	if c.cache == nil {
		return CachedResponse{}, false
	}
	e := c.cache.get(url + "\x00" + accept)
	if e == nil {
		return CachedResponse{}, false
	}
	h := http.Header{}
	if ct := e.header.Get("Content-Type"); ct != "" {
		h.Set("Content-Type", ct)
	}
	return CachedResponse{URL: url, Accept: accept, ETag: e.etag, Header: h, Body: bytes.Clone(e.body)}, true
}

// SeedCachedResponse puts r in the client's ETag cache (a no-op without a
// cache, an ETag or a URL), so the next GET of r.URL with r.Accept sends
// If-None-Match: r.ETag and a 304 is served r.Body.
func (c *Client) SeedCachedResponse(r CachedResponse) {
	if c.cache == nil || r.URL == "" || r.ETag == "" || len(r.Body) > maxCachedBodyBytes {
		return
	}
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	c.cache.put(&etagEntry{key: r.URL + "\x00" + r.Accept, etag: r.ETag, header: h, body: bytes.Clone(r.Body)})
}
