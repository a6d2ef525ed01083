package runners

import "fmt"

// Pagination limits of the inventory reads (unity-lifecycle-facts.md §6).
const (
	// PerPage is the page size asked of GitHub (its maximum).
	PerPage = 100
	// MaxPages bounds one listing; needing more is an error.
	MaxPages = 10
)

// Stable codes of a [PageError].
const (
	CodePageInvalidTotal     = "inventory-invalid-total-count"
	CodePageTotalChanged     = "inventory-total-count-changed"
	CodePageOversized        = "inventory-page-oversized"
	CodePageEmptyBeforeTotal = "inventory-empty-page-before-total"
	CodePageOverflow         = "inventory-more-items-than-total"
	CodePageCap              = "inventory-page-cap"
)

// PageError reports a listing whose pages do not add up: the inventory
// changed while it was read, or GitHub answered inconsistently. Either way
// the collected list is not a trustworthy inventory.
type PageError struct {
	Code    string
	Listing string
	Message string
}

// Error implements error.
func (e *PageError) Error() string {
	return fmt.Sprintf("%s: %s", e.Listing, e.Message)
}

// Pager keeps the books of one paginated listing. Feed it every page in
// order with [Pager.Add]; it says whether to fetch the next page and refuses
// a listing that cannot be complete and consistent:
//   - total_count must be a non-negative number that fits in MaxPages pages,
//     and every page must report the same total_count;
//   - a page may not hold more than PerPage items;
//   - collection stops exactly when the collected count reaches
//     total_count; an empty page before that, or more items than
//     total_count, is an error;
//   - after MaxPages pages the listing must be complete.
//
// The zero value is not usable; use [NewPager].
type Pager struct {
	listing   string
	pages     int
	total     int
	collected int
	done      bool
}

// NewPager returns a Pager for the listing named listing (used in errors,
// e.g. "runner groups" or "runners of group 7").
func NewPager(listing string) *Pager { return &Pager{listing: listing} }

// Page returns the 1-based number of the next page to fetch.
func (p *Pager) Page() int { return p.pages + 1 }

// Collected returns the number of items accepted so far.
func (p *Pager) Collected() int { return p.collected }

// Add records one page: items is the number of entries on it and
// totalCount the total_count it reported. more is true when another page
// must be fetched; false with a nil error means the listing is complete.
func (p *Pager) Add(items, totalCount int) (more bool, err error) {
	fail := func(code, format string, args ...any) (bool, error) {
		return false, &PageError{Code: code, Listing: p.listing, Message: fmt.Sprintf(format, args...)}
	}
	if p.done {
		return fail(CodePageOverflow, "a page was added after the listing was complete")
	}
	p.pages++
	switch {
	case totalCount < 0 || totalCount > PerPage*MaxPages:
		if totalCount > PerPage*MaxPages {
			return fail(CodePageCap, "total_count %d needs more than %d pages of %d", totalCount, MaxPages, PerPage)
		}
		return fail(CodePageInvalidTotal, "total_count %d is not a valid count", totalCount)
	case p.pages > 1 && totalCount != p.total:
		return fail(CodePageTotalChanged, "total_count changed from %d to %d between pages (the inventory changed while it was read)", p.total, totalCount)
	case items < 0 || items > PerPage:
		return fail(CodePageOversized, "page %d holds %d items, more than the %d asked for", p.pages, items, PerPage)
	}
	p.total = totalCount
	if items == 0 && p.collected < p.total {
		return fail(CodePageEmptyBeforeTotal, "page %d is empty after %d of %d items", p.pages, p.collected, p.total)
	}
	p.collected += items
	if p.collected > p.total {
		return fail(CodePageOverflow, "%d items collected but total_count is %d (the inventory changed while it was read)", p.collected, p.total)
	}
	if p.collected == p.total {
		p.done = true
		return false, nil
	}
	if p.pages >= MaxPages {
		return fail(CodePageCap, "still incomplete after %d pages (%d of %d items)", MaxPages, p.collected, p.total)
	}
	return true, nil
}

// ReasonCode returns Code (the ::error title and job summary code).
func (e *PageError) ReasonCode() string { return e.Code }
