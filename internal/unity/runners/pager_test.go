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
	}{
		"empty listing":            {[]page{{0, 0}}, 1, ""},
		"one partial page":         {[]page{{7, 7}}, 1, ""},
		"exactly one full page":    {[]page{{100, 100}}, 1, ""},
		"three pages":              {[]page{{100, 250}, {100, 250}, {50, 250}}, 3, ""},
		"ten full pages":           {[]page{{100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}, {100, 1000}}, 10, ""},
		"short pages still add up": {[]page{{30, 60}, {30, 60}}, 2, ""},
		"total beyond the cap":     {[]page{{100, 1001}}, 1, runners.CodePageCap},
		"negative total":           {[]page{{0, -1}}, 1, runners.CodePageInvalidTotal},
		"total shrinks":            {[]page{{100, 250}, {100, 249}}, 2, runners.CodePageTotalChanged},
		"total grows":              {[]page{{100, 250}, {100, 251}}, 2, runners.CodePageTotalChanged},
		"empty page before total":  {[]page{{100, 250}, {0, 250}}, 2, runners.CodePageEmptyBeforeTotal},
		"first page empty":         {[]page{{0, 3}}, 1, runners.CodePageEmptyBeforeTotal},
		"more items than total":    {[]page{{100, 150}, {100, 150}}, 2, runners.CodePageOverflow},
		"oversized page":           {[]page{{101, 500}}, 1, runners.CodePageOversized},
		"cap reached incomplete":   {[]page{{50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}, {50, 1000}}, 10, runners.CodePageCap},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := runners.NewPager("runners")
			fetched, err := feed(p, tc.pages)
			assert.Equal(t, tc.fetched, fetched, "pages fetched")
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.pages[0].total, p.Collected())
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
				if page != want || served != total || p.Collected() != total {
					t.Fatalf("stopped after %d pages with %d of %d, want %d pages", page, served, total, want)
				}
				return
			}
		}
	})
}

// Property: if any page reports a total_count different from the first,
// the listing is refused.
func TestPagerRefusesAnyChangedTotal(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.IntRange(runners.PerPage+1, runners.PerPage*runners.MaxPages).Draw(t, "total")
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
			if page == bad {
				if err == nil {
					t.Fatalf("a total_count change on page %d was accepted", page)
				}
				return
			}
			if err != nil || !more {
				t.Fatalf("page %d: more=%v err=%v", page, more, err)
			}
		}
	})
}
