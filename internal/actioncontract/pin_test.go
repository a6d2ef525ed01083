package actioncontract_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinPlaceholder is the commit every action of this repository is pinned to
// in the README's consumer workflow and docs/examples: git's null object id.
// It is 40 lowercase hex, so GitHub's workflow parser and the policy check
// accept the file as written, and it is never the id of a commit (git
// reserves it for "no object"), so nobody can mistake it for a reviewed pin:
// a runner fails to resolve it until the adopter replaces it.
const pinPlaceholder = "0000000000000000000000000000000000000000"

// retiredPin is the pin the examples carried before the placeholder: a real
// commit of this repository that lacks 8 of the 14 actions the workflow uses
// (act failed with "failed to read 'action.yml' ... classify-unity-changes").
// Spelled in two halves so this file does not itself carry it.
var retiredPin = "95952cc76eed1865" + "72c2878a4cdfb61aa1bf09d3"

// pinnedOwnAction matches a uses: of this repository's actions and captures
// the pin.
var pinnedOwnAction = regexp.MustCompile(regexp.QuoteMeta(thisRepository) + `/\.github/actions/[a-z0-9-]+@([0-9A-Za-z._/-]+)`)

// TestExamplesPinThePlaceholder: the README's consumer workflow and every
// docs/examples workflow pin this repository's actions to the placeholder
// and nothing else, and the workflow's header says in one sentence what to
// replace it with.
func TestExamplesPinThePlaceholder(t *testing.T) {
	t.Parallel()
	require.Regexp(t, `^0{40}$`, pinPlaceholder, "the placeholder must stay git's null object id")
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "examples", "*.yml"))
	require.NoError(t, err)
	files = append(files, filepath.Join(repoRoot, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot, f)
		for _, m := range pinnedOwnAction.FindAllStringSubmatch(string(b), -1) {
			assert.Equal(t, pinPlaceholder, m[1], "%s: %s must pin the placeholder; an adopter replaces it (docs/adopting.md)", rel, m[0])
		}
	}
	raw, _ := readExample(t)
	header := strings.Join(strings.Fields(strings.ReplaceAll(raw[:strings.Index(raw, "\nname:")], "#", " ")), " ")
	for _, want := range []string{
		"The all-zero pin " + pinPlaceholder + " is a placeholder",
		"replace it with the commit a release tag points to",
		"Before your first release",
		"never a branch or tag",
	} {
		assert.Contains(t, header, want, "%s: the header must say what the placeholder is and what replaces it", exampleWorkflow)
	}
}

// TestRetiredPinIsGone: the commit the examples used to pin appears in no
// file of the repository (README, docs, locks, testdata), so it cannot be
// copied again.
func TestRetiredPinIsGone(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(strings.ToLower(string(b)), retiredPin) {
			rel, _ := filepath.Rel(repoRoot, p)
			assert.Failf(t, "retired pin", "%s still carries the retired pin %s; use the placeholder %s", rel, retiredPin, pinPlaceholder)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestAdoptingSaysWhatToPinBeforeTheFirstRelease: docs/adopting.md keeps
// its delimited "Before your first release" section, which says what
// replaces the placeholder before and after a first release and what the
// runners need in each case.
func TestAdoptingSaysWhatToPinBeforeTheFirstRelease(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "adopting.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- before-first-release:begin")
	require.True(t, ok, "docs/adopting.md lost its before-first-release section")
	section, _, ok := strings.Cut(after, "<!-- before-first-release:end -->")
	require.True(t, ok, "the before-first-release section has no end marker")
	text := strings.Join(strings.Fields(section), " ")
	for _, want := range []string{
		"Before your first release",
		pinPlaceholder,
		"Before your first release:** one reviewed commit of **your** lock repository's default branch",
		"**Go** (the `go` line of the lock repository's `go.mod`",
		"`BUILD_LOCK_GO`",
		"After your first release:** the commit the release tag points to",
		"**no Go**",
		"error [no-go]",
	} {
		assert.Contains(t, text, want)
	}
}
