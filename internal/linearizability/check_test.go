package linearizability

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

var lockFile = File{Owner: "acme", Repo: "build-lock", Branch: "lock-state", Path: "locks/" + testLock + ".json"}

// putRequest is a Contents API write as go-github sends it.
func putRequest(t *testing.T, f File, base string, content []byte, message string) *http.Request {
	body := map[string]string{"message": message, "content": base64.StdEncoding.EncodeToString(content), "branch": f.Branch}
	if base != "" {
		body["sha"] = base
	}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, "https://api.github.com/repos/"+f.Owner+"/"+f.Repo+"/contents/"+f.Path, bytes.NewReader(data))
	require.NoError(t, err)
	return req
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// answer is a base transport that answers every request with status (0:
// a transport error, as a lost answer).
func answer(status int) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		if status == 0 {
			return nil, errors.New("connection reset")
		}
		body := "{}"
		if status == http.StatusConflict {
			body = `{"message":"locks/unity.json does not match 0123456789012345678901234567890123456789"}`
		}
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}}, nil
	})
}

// answerMessage answers every request with status and GitHub's message.
func answerMessage(status int, message string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		body, _ := json.Marshal(map[string]string{"message": message})
		return &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}}, nil
	})
}

// scripted records one write by actor answered with status.
func scripted(t *testing.T, r *Recorder, a Actor, base string, content []byte, status int) string {
	resp, err := r.Transport(answer(status), a).RoundTrip(putRequest(t, lockFile, base, content, "write"))
	if err == nil {
		_ = resp.Body.Close()
	}
	return store.BlobSHA(content)
}

func encode(t *testing.T, s *lockstate.State) []byte {
	data, err := lockstate.Encode(s)
	require.NoError(t, err)
	return data
}

// lockHistory is a recorder tracking the lock with the driver's rules,
// seeded at d's current state.
func lockHistory(t *testing.T, d *driver) (*Recorder, []byte) {
	r := NewRecorder(clock.Real{})
	seed := encode(t, d.st)
	rules := d.rules
	r.Track(lockFile, &rules, seed, true)
	return r, seed
}

func TestCheckAcceptsALegalHistoryAndItsClaims(t *testing.T) {
	d := newDriver(t, 6, cfgAt(6, 1, 0, 2))
	r, seed := lockHistory(t, d)
	a, b := ident(1, "r1", 1), ident(2, "r2", 1)
	call := r.BeginAcquire(lockFile, jobActor(a))
	s, _, err := d.acquire(a)
	require.NoError(t, err)
	admitted := scripted(t, r, jobActor(a), store.BlobSHA(seed), encode(t, s.Next), httpOK)
	r.Acquired(lockFile, jobActor(a), call, "1", admitted)
	s, _, err = d.acquire(b)
	require.NoError(t, err)
	queued := scripted(t, r, jobActor(b), admitted, encode(t, s.Next), http.StatusOK)
	// A concurrent writer that lost the race: refused.
	scripted(t, r, jobActor(b), admitted, []byte("{}"), http.StatusConflict)
	rcall := r.Now()
	s, _, err = d.release(a, confirmed)
	require.NoError(t, err)
	released := scripted(t, r, jobActor(a), queued, encode(t, s.Next), http.StatusOK)
	r.Released(lockFile, jobActor(a), rcall)
	content := encode(t, s.Next)
	r.Observe(lockFile, func() ([]byte, bool) { return content, true })
	res := r.Check(Options{})
	assert.True(t, res.OK(), "%s%s", res.Summary(), describe(res.Violations))
	assert.Equal(t, 4, res.Writes)
	assert.Equal(t, 1, res.RefusedWrites)
	assert.Equal(t, 2, res.Claims)
	assert.Equal(t, released, store.BlobSHA(content))
}

const httpOK = http.StatusOK

// TestAmbiguousWrites: a write without an answer may have applied or not;
// the rest of the history decides, and a claim that needs it applied is
// refused when the later writes show it did not.
func TestAmbiguousWrites(t *testing.T) {
	build := func(t *testing.T, landed bool, claim bool) Result {
		d := newDriver(t, 6, cfgAt(6, 2, 0, 2))
		r, seed := lockHistory(t, d)
		a, b := ident(1, "r1", 1), ident(2, "r2", 1)
		call := r.BeginAcquire(lockFile, jobActor(a))
		before := d.st
		s, _, err := d.acquire(a)
		require.NoError(t, err)
		lost := scripted(t, r, jobActor(a), store.BlobSHA(seed), encode(t, s.Next), 0)
		if claim {
			r.Acquired(lockFile, jobActor(a), call, "1", lost)
		}
		if !landed {
			d.st = before // the write never applied; b writes on the seed
		}
		s, _, err = d.acquire(b)
		require.NoError(t, err)
		base := store.BlobSHA(seed)
		if landed {
			base = lost
		}
		scripted(t, r, jobActor(b), base, encode(t, s.Next), httpOK)
		final := encode(t, s.Next)
		r.Observe(lockFile, func() ([]byte, bool) { return final, true })
		return r.Check(Options{})
	}
	t.Run("it applied", func(t *testing.T) {
		res := build(t, true, true)
		assert.True(t, res.OK(), describe(res.Violations))
		assert.Equal(t, 1, res.UnknownWrites)
	})
	t.Run("it did not apply", func(t *testing.T) {
		res := build(t, false, false)
		assert.True(t, res.OK(), describe(res.Violations))
	})
	t.Run("it did not apply but the job said acquired", func(t *testing.T) {
		res := build(t, false, true)
		require.False(t, res.OK())
		assert.Equal(t, porcupine.Illegal, res.Verdict)
		assert.Contains(t, codes(res.Violations), CodeNotLinearizable)
		assert.Contains(t, codes(res.Violations), CodeClaimAcquired)
	})
}

// TestRealTimeOrder: an outcome reported after a write returned cannot be
// explained by the state before that write.
func TestRealTimeOrder(t *testing.T) {
	d := newDriver(t, 6, cfgAt(6, 1, 0, 2))
	r, seed := lockHistory(t, d)
	a := ident(1, "r1", 1)
	call := r.BeginAcquire(lockFile, jobActor(a))
	s, _, err := d.acquire(a)
	require.NoError(t, err)
	held := scripted(t, r, jobActor(a), store.BlobSHA(seed), encode(t, s.Next), httpOK)
	r.Acquired(lockFile, jobActor(a), call, "1", held)
	s, _, err = d.release(a, confirmed)
	require.NoError(t, err)
	scripted(t, r, jobActor(a), held, encode(t, s.Next), httpOK)
	// Invoked after the release returned, yet claiming the seat: only a
	// stale read could say so.
	late := r.Now()
	r.Acquired(lockFile, jobActor(a), late, "1", held)
	res := r.Check(Options{})
	assert.True(t, res.OK(), "BeginAcquire widened the window to the first acquire of the holder id: %s", describe(res.Violations))

	r2, seed2 := lockHistory(t, newDriver(t, 6, cfgAt(6, 1, 0, 2)))
	require.Equal(t, seed, seed2)
	scripted(t, r2, jobActor(a), store.BlobSHA(seed), encode(t, d.steps[0].Next), httpOK)
	scripted(t, r2, jobActor(a), held, encode(t, d.steps[1].Next), httpOK)
	r2.Acquired(lockFile, jobActor(a), r2.Now(), "1", held)
	res = r2.Check(Options{})
	assert.Equal(t, porcupine.Illegal, res.Verdict, "a claim invoked after the release returned")
}

// TestRefusedWriteMustNotMatchTheHead: a 409 while the file was at the
// write's own base is not GitHub's compare-and-swap.
func TestRefusedWriteMustNotMatchTheHead(t *testing.T) {
	r := NewRecorder(nil)
	r.Track(lockFile, nil, []byte("v0"), true)
	scripted(t, r, Actor{Kind: ActorJob}, store.BlobSHA([]byte("v0")), []byte("v1"), http.StatusConflict)
	res := r.Check(Options{})
	assert.Equal(t, porcupine.Illegal, res.Verdict)

	r = NewRecorder(nil)
	r.Track(lockFile, nil, []byte("v0"), true)
	scripted(t, r, Actor{Kind: ActorJob}, store.BlobSHA([]byte("stale")), []byte("v1"), http.StatusConflict)
	scripted(t, r, Actor{Kind: ActorJob}, "", []byte("v1"), http.StatusUnprocessableEntity)
	res = r.Check(Options{})
	assert.True(t, res.OK(), "a stale sha and a missing sha are refused: %s", describe(res.Violations))
	assert.Equal(t, 2, res.RefusedWrites)
}

// TestRefusalsThatSayNothingAboutTheFile: a 409 for a commit that overlapped
// on the branch ("is at <head> but expected <base>", whichever file it
// touched) and a branch rule's refusal (409 or 422) apply nothing but say
// nothing about the file's version: they are legal at the write's own base
// and recorded as not applied, and the body is still readable by the client.
func TestRefusalsThatSayNothingAboutTheFile(t *testing.T) {
	for _, a := range []struct {
		status  int
		message string
	}{
		{http.StatusConflict, "is at 1111111111111111111111111111111111111111 but expected 2222222222222222222222222222222222222222"},
		{http.StatusConflict, "Repository rule violations found\n\nCannot update this protected ref.\n\n"},
		{http.StatusUnprocessableEntity, "Protected branch update failed for refs/heads/lock-state."},
	} {
		r := NewRecorder(nil)
		r.Track(lockFile, nil, []byte("v0"), true)
		req := putRequest(t, lockFile, store.BlobSHA([]byte("v0")), []byte("v1"), "write")
		resp, err := r.Transport(answerMessage(a.status, a.message), Actor{Kind: ActorJob}).RoundTrip(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), "message", "the client still reads the answer")
		res := r.Check(Options{})
		assert.True(t, res.OK(), "%q: %s", a.message, describe(res.Violations))
		assert.Equal(t, 1, res.NotAppliedWrites, a.message)
		assert.Zero(t, res.RefusedWrites)
	}
}

// TestIllegalWriteThatLandedIsNamed: the explanation names the rule a
// landed write broke, and the visualization is written where asked.
func TestIllegalWriteThatLandedIsNamed(t *testing.T) {
	d := newDriver(t, 6, cfgAt(6, 1, 0, 2))
	r, seed := lockHistory(t, d)
	a, b := ident(1, "r1", 1), ident(2, "r2", 1)
	s, _, err := d.acquire(a)
	require.NoError(t, err)
	held := scripted(t, r, jobActor(a), store.BlobSHA(seed), encode(t, s.Next), httpOK)
	// b admits itself next to a on the only seat.
	over := s.Next.Clone()
	over.FencingToken++
	over.Holders = append(over.Holders, holderOf(b, t0, over.FencingToken))
	content := encode(t, over)
	scripted(t, r, jobActor(b), held, content, httpOK)
	r.Observe(lockFile, func() ([]byte, bool) { return content, true })
	dir := t.TempDir()
	res := r.Check(Options{VisualizeDir: func() string { return dir }, Name: "over/admission"})
	require.Equal(t, porcupine.Illegal, res.Verdict)
	assert.Contains(t, codes(res.Violations), CodeOverAdmission, describe(res.Violations))
	require.NotEmpty(t, res.Visualization)
	assert.Equal(t, dir, strings.TrimSuffix(res.Visualization, "/linearizability-over_admission.html"))
	html, err := os.ReadFile(res.Visualization)
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")
}

// TestBudget: a check that hits its step budget says so (Unknown, with
// its code), and never claims a verdict.
func TestBudget(t *testing.T) {
	d := newDriver(t, 6, cfgAt(6, 1, 0, 2))
	r, seed := lockHistory(t, d)
	base := store.BlobSHA(seed)
	for i := range 8 {
		a := ident(i+1, fmt.Sprintf("r%d", i), 1)
		s, _, err := d.acquire(a)
		require.NoError(t, err)
		base = scripted(t, r, jobActor(a), base, encode(t, s.Next), httpOK)
	}
	res := r.Check(Options{MaxSteps: 3})
	assert.Equal(t, porcupine.Unknown, res.Verdict)
	assert.Equal(t, []string{CodeCheckTimeout}, codes(res.Violations))
	res = r.Check(Options{})
	assert.True(t, res.OK(), describe(res.Violations))
}

// TestPartitionsPerFile: two locks are checked on their own.
func TestPartitionsPerFile(t *testing.T) {
	r := NewRecorder(nil)
	other := lockFile
	other.Path = "locks/other.json"
	r.Track(lockFile, nil, []byte("a0"), true)
	r.Track(other, nil, nil, false)
	scripted(t, r, Actor{Kind: ActorJob}, store.BlobSHA([]byte("a0")), []byte("a1"), httpOK)
	resp, err := r.Transport(answer(http.StatusCreated), Actor{Kind: ActorJob}).RoundTrip(putRequest(t, other, "", []byte("b1"), "create"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	res := r.Check(Options{})
	assert.True(t, res.OK(), describe(res.Violations))
	assert.Equal(t, 2, res.Partitions)
}

// TestTransportPassesOtherRequestsThrough: only PUTs of tracked files on
// their branch are recorded.
func TestTransportPassesOtherRequestsThrough(t *testing.T) {
	r := NewRecorder(nil)
	r.Track(lockFile, nil, nil, false)
	tr := r.Transport(answer(httpOK), Actor{Kind: ActorJob})
	get, err := http.NewRequest(http.MethodGet, "https://api.github.com/repos/acme/build-lock/contents/"+lockFile.Path, nil)
	require.NoError(t, err)
	other := lockFile
	other.Branch = "main"
	for _, req := range []*http.Request{get, putRequest(t, other, "", []byte("x"), "m")} {
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
	}
	assert.Equal(t, 0, r.Check(Options{}).Operations)
}

// TestConcurrentWritesToTheEmulator: 16 writers race compare-and-swap
// writes through the emulator with lost answers, 5xx and GitHub's commit
// window (a write overlapping another commit on the branch is refused with
// "is at <head> but expected <base>"); every history is linearizable as a
// register, the lost answers are recorded unknown, the overlaps not
// applied and a write on a superseded blob SHA refused.
func TestConcurrentWritesToTheEmulator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: 7, CommitLatency: emulator.DefaultCommitLatency})
		em.AddOwner("acme", 1, true)
		em.AddRepo("acme", "build-lock", 2, "main")
		require.NoError(t, em.CreateBranch("acme", "build-lock", "lock-state", "main"))
		em.AddToken("test-writer-secret", emulator.TokenScope{Label: "w", Repos: []string{"acme/build-lock"}, Permissions: map[string]string{"contents": "write"}, RateLimit: 100000})
		em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Probability: 0.2})
		em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 502, Probability: 0.1})
		r := NewRecorder(clock.Real{})
		r.Track(lockFile, nil, nil, false)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(7, uint64(i)))
				tr := r.Transport(em.Transport(), Actor{Kind: ActorJob, HolderID: fmt.Sprint(i)})
				for n := range 6 {
					time.Sleep(time.Duration(rng.IntN(4)) * time.Second)
					base := ""
					if h := em.History("acme", "build-lock", "lock-state", lockFile.Path); len(h) > 0 {
						base = h[len(h)-1].BlobSHA
					}
					time.Sleep(time.Duration(rng.IntN(2)) * time.Millisecond) // others read the same head
					req := putRequest(t, lockFile, base, fmt.Appendf(nil, `{"writer":%d,"n":%d}`, i, n), "w")
					req.Header.Set("Authorization", "token test-writer-secret")
					req = req.WithContext(context.Background())
					if resp, err := tr.RoundTrip(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
					}
				}
			})
		}
		wg.Wait()
		// Which racing writes lose on the blob SHA (refused) rather than
		// on the commit window (not applied) depends on goroutine order,
		// so one lost race is made certain: with the faults gone and the
		// commit window over, a write based on the first version must be
		// refused.
		em.ClearFaults()
		time.Sleep(time.Second)
		h := em.History("acme", "build-lock", "lock-state", lockFile.Path)
		require.Greater(t, len(h), 1, "the racing writers committed more than one version")
		stale := putRequest(t, lockFile, h[0].BlobSHA, []byte(`{"writer":"stale"}`), "w")
		stale.Header.Set("Authorization", "token test-writer-secret")
		resp, err := r.Transport(em.Transport(), Actor{Kind: ActorJob, HolderID: "stale"}).RoundTrip(stale.WithContext(context.Background()))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusConflict, resp.StatusCode, "a write on a superseded blob SHA loses its race")
		r.Observe(lockFile, func() ([]byte, bool) {
			h := em.History("acme", "build-lock", "lock-state", lockFile.Path)
			if len(h) == 0 {
				return nil, false
			}
			return h[len(h)-1].Content, true
		})
		res := r.Check(Options{})
		assert.True(t, res.OK(), "%s%s", res.Summary(), describe(res.Violations))
		assert.Equal(t, 97, res.Writes)
		assert.Positive(t, res.UnknownWrites, "lost answers recorded as unknown")
		assert.Positive(t, res.RefusedWrites, "lost races recorded as refused")
		assert.Positive(t, res.NotAppliedWrites, "overlapping commits on the branch recorded as not applied")
		t.Log(res.Summary())
	})
}
