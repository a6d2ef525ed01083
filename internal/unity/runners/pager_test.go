package runners_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

type page struct{ items, total int }

func feed(p *runners.Pager, pages []page) (fetched int, err error) {
	for _, pg := range pages {
		fetched++
		more, err := p.Add(pg.items, pg.total)
		if err != nil || !more {
			return fetched, err
		}
	}
	return fetched, nil
}

func TestPager(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		pages   []page
		fetched int
		code    string
		// inconsistent is the inconsistency the listing ends with ("" =
		// consistent); collected what it collected.
		inconsistent string
		collected    int
	}{
		"empty listing":            {pages: []page{{0, 0}}, fetched: 1, code: ""},
		"one partial page":         {pages: []page{{7, 7}}, fetched: 1, code: ""},
		"exactly one full page":    {pages: []page{{100, 100}}, fetched: 1, code: ""},
		"three pages":              {pages: []page{{100, 250}, {100, 250}, {50, 250}}, fetched: 3, code: ""},
		"ten full pages":           {pages: []page{{100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}}, fetched: 10, code: ""},
		"short pages still add up": {pages: []page{{30, 60}, {30, 60}}, fetched: 2, code: ""},
		"total beyond the cap":     {pages: []page{{100, 1001}}, fetched: 1, code: runners.CodePageCap},
		"negative total":           {pages: []page{{0, -1}}, fetched: 1, code: runners.CodePageInvalidTotal},
		"total shrinks":            {pages: []page{{100, 250}, {100, 249}, {49, 249}}, fetched: 3, inconsistent: runners.CodePageTotalChanged, collected: 249},
		"total grows":              {pages: []page{{100, 250}, {100, 251}, {51, 251}}, fetched: 3, inconsistent: runners.CodePageTotalChanged, collected: 251},
		"total shrinks to reached": {pages: []page{{100, 150}, {40, 140}}, fetched: 2, inconsistent: runners.CodePageTotalChanged, collected: 140},
		"empty page before total":  {pages: []page{{100, 250}, {0, 250}}, fetched: 2, inconsistent: runners.CodePageEmptyBeforeTotal, collected: 100},
		"first page empty":         {pages: []page{{0, 3}}, fetched: 1, inconsistent: runners.CodePageEmptyBeforeTotal, collected: 0},
		"more items than total":    {pages: []page{{100, 150}, {100, 150}}, fetched: 2, inconsistent: runners.CodePageOverflow, collected: 200},
		"oversized page":           {pages: []page{{101, 500}}, fetched: 1, code: runners.CodePageOversized},
		"cap reached incomplete":   {pages: []page{{50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}}, fetched: 10, code: runners.CodePageCap},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := runners.NewPager("runners")
			fetched, err := feed(p, tc.pages)
			assert.Equal(t, tc.fetched, fetched, "pages fetched")
			if tc.code == "" {
				require.NoError(t, err)
				if tc.inconsistent == "" {
					assert.Nil(t, p.Inconsistency())
					assert.Equal(t, tc.pages[0].total, p.Collected())
					return
				}
				require.NotNil(t, p.Inconsistency())
				assert.Equal(t, tc.inconsistent, p.Inconsistency().Code)
				assert.Contains(t, p.Inconsistency().Error(), "runners")
				assert.Equal(t, tc.collected, p.Collected())
				return
			}
			var pe *runners.PageError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, tc.code, pe.Code)
			assert.Contains(t, err.Error(), "runners")
		})
	}
}

func TestPagerRefusesPagesAfterCompletion(t *testing.T) {
	t.Parallel()
	p := runners.NewPager("groups")
	more, err := p.Add(2, 2)
	require.NoError(t, err)
	assert.False(t, more)
	_, err = p.Add(0, 2)
	assert.Error(t, err)
}

// Property: a listing served consistently (every page full except the
// last, the same total_count throughout) is accepted exactly when it fits
// in MaxPages pages, after exactly ceil(total/PerPage) pages (one for an
// empty listing), and the pager asks for page numbers 1, 2, 3, ... in turn.
func TestPagerAcceptsEveryConsistentListing(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.IntRange(0, runners.PerPage*runners.MaxPages+150).Draw(t, "total")
		p := runners.NewPager("runners")
		served := 0
		for page := 1; ; page++ {
			if p.Page() != page {
				t.Fatalf("asked for page %d, want %d", p.Page(), page)
			}
			n := min(runners.PerPage, total-served)
			more, err := p.Add(n, total)
			if total > runners.PerPage*runners.MaxPages {
				if err == nil {
					t.Fatalf("total %d accepted beyond the cap", total)
				}
				return
			}
			if err != nil {
				t.Fatalf("consistent listing of %d refused on page %d: %v", total, page, err)
			}
			served += n
			if !more {
				want := max(1, (total+runners.PerPage-1)/runners.PerPage)
				if page != want || served != total || p.Collected() != total || p.Inconsistency() != nil {
					t.Fatalf("stopped after %d pages with %d of %d, want %d pages", page, served, total, want)
				}
				return
			}
		}
	})
}

// Property: if any page reports a total_count different from the first,
// the listing never passes as consistent: it is marked inconsistent (it
// can prove presence, never absence) or, when the change leaves it
// incomplete at the page cap, refused.
func TestPagerFlagsAnyChangedTotal(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.IntRange(runners.PerPage+1, runners.PerPage*runners.MaxPages-2).Draw(t, "total")
		pages := (total + runners.PerPage - 1) / runners.PerPage
		bad := rapid.IntRange(2, pages).Draw(t, "changed page")
		delta := rapid.SampledFrom([]int{-2, -1, 1, 2}).Draw(t, "delta")
		p := runners.NewPager("runners")
		for page := 1; page <= pages; page++ {
			reported := total
			if page == bad {
				reported += delta
			}
			more, err := p.Add(min(runners.PerPage, total-(page-1)*runners.PerPage), reported)
			if err != nil {
				if page == bad && page == runners.MaxPages {
					return
				}
				t.Fatalf("page %d: %v", page, err)
			}
			if page >= bad {
				if p.Inconsistency() == nil {
					t.Fatalf("a total_count change on page %d was not flagged", page)
				}
				return
			}
			if !more {
				t.Fatalf("page %d: ended early", page)
			}
		}
	})
}
