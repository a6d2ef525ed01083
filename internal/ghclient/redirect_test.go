package ghclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

func TestParseRepositoryRedirect(t *testing.T) {
	t.Parallel()
	got, err := ParseRepositoryRedirect("/repos/acme/old/contents/locks/x.json", "/repositories/42/contents/locks/x.json")
	require.NoError(t, err)
	assert.Equal(t, RedirectTarget{Owner: "acme", Name: "old", ID: 42, Rest: "contents/locks/x.json"}, got)
	got, err = ParseRepositoryRedirect("/repos/acme/old", "/repositories/42")
	require.NoError(t, err)
	assert.Equal(t, int64(42), got.ID)
	for _, bad := range [][2]string{
		{"/repos/acme/old/contents/a", "/repositories/42/contents/b"}, // another resource
		{"/repos/acme/old/issues", "/repos/evil/other/issues"},        // not the id form
		{"/repos/acme/old/issues", "/repositories/x/issues"},          // not an id
		{"/repos/acme/old/issues", "/repositories/042/issues"},        // not canonical
		{"/repos/acme/old/issues", "/repositories/-1/issues"},
		{"/user/repos", "/repositories/42"}, // not a repository path
	} {
		_, err := ParseRepositoryRedirect(bad[0], bad[1])
		assert.ErrorIs(t, err, ErrRedirectRefused, "%v", bad)
	}
}

func FuzzParseRepositoryRedirect(f *testing.F) {
	f.Add("/repos/a/b/issues", "/repositories/1/issues")
	f.Add("/repos/a/b", "/repositories/12")
	f.Fuzz(func(t *testing.T, from, to string) {
		got, err := ParseRepositoryRedirect(from, to)
		if err != nil {
			return
		}
		if got.ID <= 0 || got.Owner == "" || got.Name == "" {
			t.Fatalf("accepted %q → %q as %+v", from, to, got)
		}
		if !strings.HasPrefix(to, "/repositories/") || !strings.HasPrefix(from, "/repos/"+got.Owner+"/"+got.Name) {
			t.Fatalf("accepted %q → %q", from, to)
		}
	})
}

// renamedWorld is an emulator whose lock repository acme/old (id 2001) was
// renamed to acme/new.
func renamedWorld(t *testing.T) (*emulator.Emulator, *Client) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	em := emulator.New(emulator.Options{Clock: clk, Seed: 1})
	em.AddOwner("acme", 1001, true)
	em.AddRepo("acme", "old", 2001, "main")
	em.AddRepo("acme", "decoy", 2002, "main")
	em.AddToken("test-redirect-secret", emulator.TokenScope{Label: "w", Repos: []string{"acme/old", "acme/decoy"}, Permissions: map[string]string{"contents": "write", "metadata": "read"}})
	_, err := em.PutFile("acme", "old", "main", "f.txt", []byte("one"))
	require.NoError(t, err)
	require.NoError(t, em.RenameRepo("acme", "old", "new"))
	c, err := New(context.Background(), Config{APIURL: "http://emulator.test/", Token: "test-redirect-secret", Transport: em.Transport(), Clock: clk, Jitter: func() float64 { return 0.5 }})
	require.NoError(t, err)
	return em, c
}

func TestClientFollowsARedirectToTheSameRepository(t *testing.T) {
	t.Parallel()
	em, c := renamedWorld(t)
	c.PinRepository("acme", "old", 2001)
	ctx := context.Background()
	var sha string
	require.NoError(t, c.Do(ctx, Op{Name: "GET contents"}, func(ctx context.Context) (*github.Response, error) {
		f, _, resp, err := c.GitHub().Repositories.GetContents(ctx, "acme", "old", "f.txt", nil)
		sha = f.GetSHA()
		return resp, err
	}))
	assert.Equal(t, emulator.BlobSHA([]byte("one")), sha)
	// A write follows the 307 with its body, into the same repository.
	require.NoError(t, c.Do(ctx, Op{Name: "PUT contents", Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.GitHub().Repositories.UpdateFile(ctx, "acme", "old", "f.txt", &github.RepositoryContentFileOptions{
			Message: github.String("m"), Content: []byte("two"), SHA: github.String(sha)})
		return resp, err
	}))
	h := em.History("acme", "new", "main", "f.txt")
	require.Len(t, h, 2)
	assert.Equal(t, "two", string(h[1].Content))
	assert.EqualValues(t, 2, c.Stats().Redirects)
}

func TestClientRefusesARedirectToAnotherRepository(t *testing.T) {
	t.Parallel()
	em, c := renamedWorld(t)
	c.PinRepository("acme", "old", 2002) // the configured id is not where the name now goes
	err := c.Do(context.Background(), Op{Name: "PUT contents", Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.GitHub().Repositories.UpdateFile(ctx, "acme", "old", "g.txt", &github.RepositoryContentFileOptions{
			Message: github.String("m"), Content: []byte("x")})
		return resp, err
	})
	e := mustErr(t, err)
	assert.Equal(t, CodeRedirectRefused, e.Code)
	assert.Equal(t, ClassFatal, e.Class)
	assert.Equal(t, 1, e.Attempts, "never retried")
	assert.Contains(t, e.Error(), "repository 2002")
	assert.Empty(t, em.History("acme", "new", "main", "g.txt"), "nothing written anywhere")
	assert.Empty(t, em.History("acme", "decoy", "main", "g.txt"))
}

func TestClientRefusesRedirectsOffTheRepository(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{
		"http://evil.test/repositories/2001/contents/f.txt", // another host
		"http://emulator.test/repos/evil/other/contents/f.txt",
		"http://emulator.test/repositories/2001/contents/other.txt",
	} {
		c, err := New(context.Background(), Config{APIURL: "http://emulator.test/", Token: "test-redirect-secret",
			Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Host != "emulator.test" || !strings.HasPrefix(r.URL.Path, "/repos/acme/old/") {
					t.Errorf("followed to %s", r.URL)
				}
				return &http.Response{StatusCode: 301, Header: http.Header{"Location": {loc}}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
			}), Clock: clock.NewFake(time.Now()), Jitter: func() float64 { return 0.5 }})
		require.NoError(t, err)
		err = c.Do(context.Background(), Op{Name: "GET contents"}, func(ctx context.Context) (*github.Response, error) {
			_, _, resp, err := c.GitHub().Repositories.GetContents(ctx, "acme", "old", "f.txt", nil)
			return resp, err
		})
		e := mustErr(t, err)
		assert.Equal(t, CodeRedirectRefused, e.Code, loc)
		assert.True(t, errors.Is(err, ErrRedirectRefused) || e.Code == CodeRedirectRefused)
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
