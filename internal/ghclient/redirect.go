package ghclient

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Redirects of renamed repositories. GitHub answers a request to a renamed
// repository's old name with 301 (GET) or 307 (other methods) to
// /repositories/{id}/<the rest of the path>
// (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects).
// The client follows such a redirect only to the same repository: the same
// scheme and host, the same rest of the path, and the repository id this
// client knows for that owner/name (PinRepository, or the id the first
// redirect of that name named). Any other redirect is refused before it is
// sent, with Code [CodeRedirectRefused]: the credential would otherwise
// travel to, or write into, a repository nobody configured.

// CodeRedirectRefused is the Code of an [*Error] whose request was
// redirected somewhere the client does not follow.
const CodeRedirectRefused = "github-redirect-refused"

// maxRedirects bounds the redirects of one request.
const maxRedirects = 3

// ErrRedirectRefused is the cause of a refused redirect.
var ErrRedirectRefused = errors.New("redirect refused")

// repoPins maps lower-case "owner/name" to the repository id.
type repoPins struct {
	mu  sync.Mutex
	ids map[string]int64
}

func (p *repoPins) get(full string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.ids[strings.ToLower(full)]
	return id, ok
}

func (p *repoPins) set(full string, id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]int64{}
	}
	p.ids[strings.ToLower(full)] = id
}

// PinRepository records that owner/name is the repository with id (for
// example the consumer's GITHUB_REPOSITORY_ID, or the lock repository's id
// once read): a redirect of a request to owner/name is then followed only
// to /repositories/<id>/.
func (c *Client) PinRepository(owner, name string, id int64) {
	if id > 0 {
		c.pins.set(owner+"/"+name, id)
	}
}

// RepositoryID returns the id pinned (or learned from a followed redirect)
// for owner/name.
func (c *Client) RepositoryID(owner, name string) (int64, bool) {
	return c.pins.get(owner + "/" + name)
}

// RedirectTarget is a followed redirect's meaning: the request to
// /repos/{Owner}/{Name}/{Rest} went to /repositories/{ID}/{Rest}.
type RedirectTarget struct {
	Owner, Name string
	ID          int64
	Rest        string
}

// ParseRepositoryRedirect checks that a redirect from the API path from to
// the API path to (both escaped, without the API base) is a renamed
// repository's redirect: from is /repos/{owner}/{name}[/rest] and to is
// /repositories/{id}[/rest] with the same rest. It is pure.
func ParseRepositoryRedirect(from, to string) (RedirectTarget, error) {
	fromRest, ok := strings.CutPrefix(from, "/repos/")
	if !ok {
		return RedirectTarget{}, fmt.Errorf("%w: %s is not a repository path", ErrRedirectRefused, from)
	}
	parts := strings.SplitN(fromRest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return RedirectTarget{}, fmt.Errorf("%w: %s is not a repository path", ErrRedirectRefused, from)
	}
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	toRest, ok := strings.CutPrefix(to, "/repositories/")
	if !ok {
		return RedirectTarget{}, fmt.Errorf("%w: %s is not a /repositories/{id} path", ErrRedirectRefused, to)
	}
	idPart, toTail, _ := strings.Cut(toRest, "/")
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != idPart {
		return RedirectTarget{}, fmt.Errorf("%w: %s does not name a repository id", ErrRedirectRefused, to)
	}
	if toTail != rest {
		return RedirectTarget{}, fmt.Errorf("%w: %s is not the same resource as %s", ErrRedirectRefused, to, from)
	}
	return RedirectTarget{Owner: parts[0], Name: parts[1], ID: id, Rest: rest}, nil
}

// checkRedirect is the resource client's CheckRedirect.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirectRefused, maxRedirects)
	}
	orig, prev := via[0], via[len(via)-1]
	if req.URL.Scheme != orig.URL.Scheme || !strings.EqualFold(req.URL.Host, orig.URL.Host) {
		return fmt.Errorf("%w: %s redirected to another host", ErrRedirectRefused, orig.URL.Path)
	}
	base := strings.TrimSuffix(c.baseURL.EscapedPath(), "/")
	from, ok1 := strings.CutPrefix(prev.URL.EscapedPath(), base)
	to, ok2 := strings.CutPrefix(req.URL.EscapedPath(), base)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: %s left the API", ErrRedirectRefused, req.URL.EscapedPath())
	}
	if strings.HasPrefix(from, "/repositories/") {
		// A second hop from the id form must stay on that id.
		fromID, _, _ := strings.Cut(strings.TrimPrefix(from, "/repositories/"), "/")
		toID, _, _ := strings.Cut(strings.TrimPrefix(to, "/repositories/"), "/")
		if fromID != toID || !strings.HasPrefix(to, "/repositories/") {
			return fmt.Errorf("%w: %s redirected to %s", ErrRedirectRefused, from, to)
		}
		return nil
	}
	t, err := ParseRepositoryRedirect(from, to)
	if err != nil {
		return err
	}
	full := t.Owner + "/" + t.Name
	if id, ok := c.pins.get(full); ok {
		if id != t.ID {
			return fmt.Errorf("%w: %s is repository %d, but the redirect goes to repository %d", ErrRedirectRefused, full, id, t.ID)
		}
	} else {
		c.pins.set(full, t.ID)
	}
	c.stats.redirect()
	return nil
}
