package ghclient

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestClassifyWriteRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		msg    string
		want   WriteRefusal
	}{
		// Rulesets (409 on the Contents API, 422 on the Git refs API).
		{409, "Repository rule violations found\n\nChanges must be made through a pull request.\n\n", RefusalRules},
		{409, "Repository rule violations found\n\nCannot update this protected ref.\n\n", RefusalRules},
		{422, "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n", RefusalRules},
		{422, "Repository rule violations found\n\nSecret detected in content", RefusalRules},
		// Classic protection.
		{422, "Protected branch update failed for refs/heads/lock-state.", RefusalRules},
		{409, "protected branch hook declined", RefusalRules},
		// Lost races.
		{409, "locks/unity.json does not match 0123456789abcdef0123456789abcdef01234567", RefusalConflict},
		{409, "is at 30e15e8485d2808d7f9cdf27cecbb145252e1427 but expected 46affa9e9f78ca99714ed0e12a9c44e94e1e9055", RefusalConflict},
		{409, "refs/heads/master expected to be at e765253c2a06ed7f025ee5c971f0988e54437aca", RefusalConflict},
		{422, "Invalid request.\n\n\"sha\" wasn't supplied.", RefusalConflict},
		{422, "Reference already exists", RefusalConflict},
		{422, "Update is not a fast forward", RefusalConflict},
		// Invalid writes.
		{422, "Invalid request.\n\n\"content\" wasn't supplied.", RefusalInvalid},
		{422, "content is not valid Base64", RefusalInvalid},
		{422, "Validation Failed", RefusalInvalid},
		{422, "", RefusalInvalid},
		{400, "Repository rule violations found", RefusalInvalid},
	} {
		assert.Equal(t, tc.want, ClassifyWriteRefusal(tc.status, tc.msg), "%d %q", tc.status, tc.msg)
	}
}

// Properties: a rule marker decides whatever else the message says; without
// one, a 409 is always a conflict; the decision ignores case.
func TestClassifyWriteRefusalProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		status := rapid.SampledFrom([]int{409, 422}).Draw(t, "status")
		pre := rapid.String().Draw(t, "pre")
		post := rapid.String().Draw(t, "post")
		marker := rapid.SampledFrom(ruleMarkers).Draw(t, "marker")
		if rapid.Bool().Draw(t, "upper") {
			marker = strings.ToUpper(marker)
		}
		if got := ClassifyWriteRefusal(status, pre+marker+post); got != RefusalRules {
			t.Fatalf("with %q: %v", marker, got)
		}
		msg := rapid.String().Draw(t, "msg")
		lower := strings.ToLower(msg)
		for _, m := range ruleMarkers {
			if strings.Contains(lower, m) {
				t.Skip("contains a marker")
			}
		}
		if got := ClassifyWriteRefusal(409, msg); got != RefusalConflict {
			t.Fatalf("409 %q: %v", msg, got)
		}
		if got := ClassifyWriteRefusal(422, msg); got == RefusalRules {
			t.Fatalf("422 %q without a marker: %v", msg, got)
		}
	})
}

func FuzzClassifyWriteRefusal(f *testing.F) {
	f.Add(409, "Repository rule violations found\n\nx")
	f.Add(422, `Invalid request. "sha" wasn't supplied.`)
	f.Add(409, "is at a but expected b")
	f.Fuzz(func(t *testing.T, status int, msg string) {
		got := ClassifyWriteRefusal(status, msg)
		if status != 409 && status != 422 && got != RefusalInvalid {
			t.Fatalf("status %d: %v", status, got)
		}
		if got != ClassifyWriteRefusal(status, strings.ToUpper(msg)) && strings.EqualFold(strings.ToUpper(msg), msg) {
			t.Fatalf("case-sensitive decision for %q", msg)
		}
	})
}

// A write a branch rule refuses, or an invalid write, ends the call at its
// first attempt: fatal, with its own code, never a conflict.
func TestWriteRefusalsAreFinalNotConflicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rep  reply
		code string
	}{
		{"ruleset", reply{status: 409, body: msg(`Repository rule violations found\n\nChanges must be made through a pull request.\n\n`)}, CodeBranchRules},
		{"classic protection", reply{status: 422, body: msg("Protected branch update failed for refs/heads/lock-state.")}, CodeBranchRules},
		{"invalid", reply{status: 422, body: msg("content is not valid Base64")}, CodeInvalidWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.srv.on("PUT", filePath, tc.rep)
			err := h.putFile(context.Background(), Budget{})
			e := mustErr(t, err)
			assert.Equal(t, ClassFatal, e.Class)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, 1, e.Attempts)
			assert.False(t, IsConflict(err))
			assert.Equal(t, tc.code == CodeBranchRules, IsBranchRules(err))
			assert.Equal(t, tc.code == CodeInvalidWrite, IsInvalidWrite(err))
			assert.Len(t, h.srv.requests(), 1, "one request, nothing retried")
			eqSleeps(t, h.clock.Sleeps())
		})
	}
	// The same answers to a read stay plain fatal errors.
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath, reply{status: http.StatusConflict, body: msg("Repository rule violations found")})
	e := mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, ClassFatal, e.Class)
	assert.Equal(t, "", e.Code)
}

// IsFileMoved tells GitHub's "the file is no longer at that sha" conflict
// from the branch-head one another file's commit causes, and from every
// answer that is no conflict.
func TestIsFileMoved(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rep  reply
		want bool
	}{
		{"file moved", reply{status: 409, body: msg("locks/seats.json does not match 0123456789abcdef0123456789abcdef01234567")}, true},
		{"branch moved", reply{status: 409, body: msg("refs/heads/lock-state is at 0123456789abcdef0123456789abcdef01234567 but expected 89abcdef0123456789abcdef0123456789abcdef")}, false},
		{"ruleset", reply{status: 409, body: msg(`Repository rule violations found\n\nChanges must be made through a pull request.\n\n`)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.srv.on("PUT", filePath, tc.rep)
			err := h.putFile(context.Background(), Budget{})
			mustErr(t, err)
			assert.Equal(t, tc.want, IsFileMoved(err))
		})
	}
	assert.False(t, IsFileMoved(nil))
}
