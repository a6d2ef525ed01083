package emulator

import (
	"fmt"
	"strconv"
	"strings"
)

// paginate slices n items by per_page (default 30, max 100) and page
// (default 1) and sets GitHub's Link header (first/prev/next/last):
// https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api
func (c *reqCtx) paginate(n int) (lo, hi int, link string) {
	per := min(c.qInt("per_page", 30), 100)
	page := c.qInt("page", 1)
	last := max((n+per-1)/per, 1)
	lo = min((page-1)*per, n)
	hi = min(lo+per, n)
	mk := func(p int, rel string) string {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		path := c.r.URL.Path
		if strings.HasPrefix(path, "/api/v3/") && strings.HasSuffix(c.apiBase, "/api/v3") {
			path = strings.TrimPrefix(path, "/api/v3")
		}
		// GitHub's Link URLs name the repository by id:
		// <https://api.github.com/repositories/1300192/issues?page=2>.
		path = c.repositoriesLinkPath(path)
		return fmt.Sprintf("<%s%s?%s>; rel=%q", c.apiBase, path, q.Encode(), rel)
	}
	var parts []string
	if page > 1 {
		parts = append(parts, mk(page-1, "prev"))
	}
	if page < last {
		parts = append(parts, mk(page+1, "next"), mk(last, "last"))
	}
	if page > 1 {
		parts = append(parts, mk(1, "first"))
	}
	return lo, hi, strings.Join(parts, ", ")
}

func (c *reqCtx) paged(status int, v any, link string) *response {
	resp := c.json(status, v)
	if link != "" {
		resp.header.Set("Link", link)
	}
	return resp
}
