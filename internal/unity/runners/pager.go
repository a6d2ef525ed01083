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
	CodePageAfterEnd         = "inventory-page-after-end"
)

// PageError reports a listing that cannot be read (an error of
// [Pager.Add]) or whose pages did not add up (an inconsistency,
// [Pager.Inconsistency]): the inventory changed while it was read, or
// GitHub answered inconsistently.
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
// order with [Pager.Add]; it says whether to fetch the next page.
//
// Hard failures (an error from Add) end the listing: a total_count that is
// negative or needs more than MaxPages pages, a page of more than PerPage
// items, or a listing still incomplete after MaxPages pages.
//
// Inconsistencies are what a runner registered or removed between two page
// reads produces (GitHub paginates by offset): a total_count that changes
// from page to page, an empty page before the count is reached, or more
// items than total_count. They end the listing without an error and are
// reported by [Pager.Inconsistency]: the runners collected are real, but
// the listing may have missed one, so it may prove a runner exists and
// never that none does.
//
// Collection stops once the items collected reach the latest total_count
// (the reference's rule), or at an empty page.
//
// The zero value is not usable; use [NewPager].
type Pager struct {
	listing      string
	pages        int
	total        int
	collected    int
	done         bool
	inconsistent *PageError
}

// NewPager returns a Pager for the listing named listing (used in errors,
// e.g. "runner groups" or "runners of group 7").
func NewPager(listing string) *Pager { return &Pager{listing: listing} }

// Page returns the 1-based number of the next page to fetch.
func (p *Pager) Page() int { return p.pages + 1 }

// Collected returns the number of items accepted so far.
func (p *Pager) Collected() int { return p.collected }

// Inconsistency returns the first inconsistency of the listing (nil when
// it was read consistently): its pages did not add up, so it cannot prove
// that an item is absent.
func (p *Pager) Inconsistency() *PageError { return p.inconsistent }

// Add records one page: items is the number of entries on it and
// totalCount the total_count it reported. more is true when another page
// must be fetched; false with a nil error means the listing ended
// (consistently or not: see Inconsistency).
func (p *Pager) Add(items, totalCount int) (more bool, err error) {
	fail := func(code, format string, args ...any) (bool, error) {
		return false, &PageError{Code: code, Listing: p.listing, Message: fmt.Sprintf(format, args...)}
	}
	note := func(code, format string, args ...any) {
		if p.inconsistent == nil {
			p.inconsistent = &PageError{Code: code, Listing: p.listing, Message: fmt.Sprintf(format, args...)}
		}
	}
	if p.done {
		return fail(CodePageAfterEnd, "a page was added after the listing was complete")
	}
	p.pages++
	switch {
	case totalCount < 0:
		return fail(CodePageInvalidTotal, "total_count %d is not a valid count", totalCount)
	case totalCount > PerPage*MaxPages:
		return fail(CodePageCap, "total_count %d needs more than %d pages of %d", totalCount, MaxPages, PerPage)
	case items < 0 || items > PerPage:
		return fail(CodePageOversized, "page %d holds %d items, more than the %d asked for", p.pages, items, PerPage)
	}
	if p.pages > 1 && totalCount != p.total {
		note(CodePageTotalChanged, "total_count changed from %d to %d between pages (the inventory changed while it was read)", p.total, totalCount)
	}
	p.total = totalCount
	if items == 0 && p.collected < p.total {
		note(CodePageEmptyBeforeTotal, "page %d is empty after %d of %d items (the inventory changed while it was read)", p.pages, p.collected, p.total)
		p.done = true
		return false, nil
	}
	p.collected += items
	if p.collected > p.total {
		note(CodePageOverflow, "%d items collected but total_count is %d (the inventory changed while it was read)", p.collected, p.total)
	}
	if p.collected >= p.total {
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
