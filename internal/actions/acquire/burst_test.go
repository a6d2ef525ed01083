package acquire

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestAJoinStillToBeWrittenWaitsOutASecondaryLimitLonger: every job a
// secondary limit held back resumes at once; a job whose join has not
// landed spreads its next request over pendingJoinSpread over the lock's
// apiShare (at most MaxJoinSpread), so the releases the limit held back land
// first, while a queued job or a holder resumes within secondaryJitter.
func TestAJoinStillToBeWrittenWaitsOutASecondaryLimitLonger(t *testing.T) {
	t.Parallel()
	const s = time.Second
	until := forecastT0.Add(60 * s)
	limited := &ghclient.Error{SecondaryUntil: until}
	cases := []struct {
		name  string
		state func(st *lockstate.State)
		share float64
		want  time.Duration
	}{
		{"a queued job", func(st *lockstate.State) { st.Queue = []lockstate.Entry{{HolderID: "me"}} }, 1, 60*s + secondaryJitter},
		{"a holder", func(st *lockstate.State) {
			st.Holders = append(st.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: "me"}})
		}, 1, 60*s + secondaryJitter},
		{"a join still to be written", func(*lockstate.State) {}, 1, 60*s + pendingJoinSpread},
		{"at a quarter of the App's limits, at most MaxJoinSpread", func(*lockstate.State) {}, 0.25, 60*s + MaxJoinSpread},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(forecastT0)
			q := &acquirer{
				d:   Deps{Clock: fc, Jitter: func() float64 { return 1 }, PollUnit: s},
				a:   actionio.New(func(string) string { return "" }, io.Discard),
				cfg: lockstate.Config{MaxHolders: 2, APIShare: tc.share},
				s:   Settings{Poll: 15 * s, Timeout: time.Hour},
			}
			q.deadline = forecastT0.Add(time.Hour)
			q.id.HolderID = "me"
			q.last = stateWith(holdersAt(0))
			tc.state(q.last)
			require.NoError(t, q.waitSecondary(context.Background(), limited))
			assert.Equal(t, tc.want, fc.Now().Sub(forecastT0))
		})
	}
}
