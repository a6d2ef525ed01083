package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBurstSpec(t *testing.T) {
	ok := []struct {
		in   string
		want BurstSpec
		str  string
	}{
		{"80x2@200ms", BurstSpec{Jobs: 80, Seats: 2, Spacing: 200 * time.Millisecond, Hold: DefaultClassHold, Share: 1}, "80x2@200ms"},
		{" 40x4@1s/30s ", BurstSpec{Jobs: 40, Seats: 4, Spacing: time.Second, Hold: 30 * time.Second, Share: 1}, "40x4@1s/30s"},
		{"1x1@1ms/5s", BurstSpec{Jobs: 1, Seats: 1, Spacing: time.Millisecond, Hold: 5 * time.Second, Share: 1}, "1x1@1ms"},
		{"1000x64@1h/1h", BurstSpec{Jobs: 1000, Seats: 64, Spacing: time.Hour, Hold: time.Hour, Share: 1}, "1000x64@1h0m0s/1h0m0s"},
		{"20x2@2s:0.25", BurstSpec{Jobs: 20, Seats: 2, Spacing: 2 * time.Second, Hold: DefaultClassHold, Share: 0.25}, "20x2@2s:0.25"},
		{"20x2@2s/30s:0.5", BurstSpec{Jobs: 20, Seats: 2, Spacing: 2 * time.Second, Hold: 30 * time.Second, Share: 0.5}, "20x2@2s/30s:0.5"},
		{"20x2@2s:1", BurstSpec{Jobs: 20, Seats: 2, Spacing: 2 * time.Second, Hold: DefaultClassHold, Share: 1}, "20x2@2s"},
	}
	for _, c := range ok {
		got, err := ParseBurstSpec(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, c.str, got.String(), c.in)
		again, err := ParseBurstSpec(got.String())
		require.NoError(t, err, "round trip of %q", c.in)
		assert.Equal(t, got, again, "round trip of %q", c.in)
	}
	bad := map[string]string{
		"":              "no @SPACING",
		"80x2":          "no @SPACING",
		"80@200ms":      "no JOBSxSEATS",
		"0x2@200ms":     "jobs must be",
		"1001x2@200ms":  "jobs must be",
		"ax2@200ms":     "jobs must be",
		"80x0@200ms":    "seats must be",
		"80x65@200ms":   "seats must be",
		"80x2@0s":       "spacing must be",
		"80x2@fast":     "spacing must be",
		"80x2@2h":       "spacing must be",
		"80x2@1s/500ms": "hold must be",
		"80x2@1s/2h":    "hold must be",
		"80x2@1s/":      "hold must be",
		"80x2@1s:0":     "share must be",
		"80x2@1s:1.5":   "share must be",
		"80x2@1s:a":     "share must be",
		"80x2@1s:NaN":   "share must be",
		"80x2@1s:":      "share must be",
	}
	for in, why := range bad {
		_, err := ParseBurstSpec(in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), why, "%q", in)
		assert.Contains(t, err.Error(), "JOBSxSEATS@SPACING[/HOLD][:SHARE]", "%q: the error shows the syntax", in)
	}
}

func TestABurstCellIsJudgedLikeTheTailBursts(t *testing.T) {
	wl := BurstSpec{Jobs: 40, Seats: 4, Spacing: 500 * time.Millisecond, Hold: DefaultClassHold}.Workload(3)
	assert.Equal(t, "class-40x4@500ms", wl.Name)
	assert.Equal(t, 4, wl.Seats)
	assert.Equal(t, 3, wl.Seeds)
	assert.Equal(t, 10*time.Second, wl.NoticedP95, "burst-40x4's p95 target")
	assert.True(t, wl.BudgetBound)
	jobs := wl.Jobs(nil)
	require.Len(t, jobs, 40)
	assert.Equal(t, 39*500*time.Millisecond, jobs[39].arrival)
	assert.Equal(t, DefaultClassHold, jobs[0].hold)

	quarter := BurstSpec{Jobs: 20, Seats: 2, Spacing: 2 * time.Second, Hold: DefaultClassHold, Share: 0.25}.Workload(4)
	assert.Equal(t, "class-20x2@2s:0.25", quarter.Name)
	assert.InDelta(t, 0.25, quarter.LimitScale, 1e-9, "GitHub's limits at the share")
	assert.Contains(t, quarter.Config, `"apiShare":0.25`)
	assert.Contains(t, quarter.Config, `"maxHolders":2`)
	assert.Equal(t, 20*time.Second, quarter.NoticedP95, "judged like burst-20-quarter-limits")
	assert.Zero(t, wl.LimitScale, "a cell without a share runs at GitHub's own limits")
	assert.Empty(t, wl.Config)

	grid := ClassGrid()
	assert.Len(t, grid, 32)
	seen := map[string]bool{}
	for _, b := range grid {
		assert.False(t, seen[b.String()], "cell %s twice", b)
		seen[b.String()] = true
		again, err := ParseBurstSpec(b.String())
		require.NoError(t, err)
		assert.Equal(t, b, again, "the grid's cell %s is what BURST=%s runs", b, b)
	}
	assert.True(t, seen["80x4@100ms"], "the grid holds bench burst-40x4's spacing and seats")
	assert.True(t, seen["10x1@1s"], "and a small queue on one seat")
	assert.True(t, seen["20x2@2s:0.25"], "and a quarter of the App")
}

func TestRenderClassNamesTheFailedTargets(t *testing.T) {
	pass := &Result{Name: "class-80x1@1s", Seeds: 4, Targets: []Target{{ID: TargetTailWrites, Pass: true}}}
	fail := &Result{Name: "class-80x2@200ms", Seeds: 4, PeakWrites: 87, Targets: []Target{
		{ID: TargetTailSecondary, Pass: false}, {ID: TargetTailWrites, Pass: false}, {ID: TargetSeatIdleShare, Pass: true},
	}}
	var buf bytes.Buffer
	require.NoError(t, RenderClass(&buf, []*Result{pass, fail}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[1], "80x1@1s "), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], "PASS"), lines[1])
	assert.Contains(t, lines[2], " 87 ")
	assert.True(t, strings.HasSuffix(lines[2], "FAIL "+TargetTailSecondary+","+TargetTailWrites), lines[2])
}

// FuzzParseBurstSpec: whatever the input, a spec is refused or round-trips
// through String, within the cell bounds.
func FuzzParseBurstSpec(f *testing.F) {
	for _, seed := range []string{"80x2@200ms", "40x4@1s/30s", "20x2@2s:0.25", "20x2@2s/30s:0.5", "1x1@1ms", "80x2@1s:", ":", "@", "x@/:"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ParseBurstSpec(in)
		if err != nil {
			return
		}
		require.True(t, b.Jobs >= 1 && b.Jobs <= maxClassJobs && b.Seats >= 1 && b.Seats <= maxClassSeats, "%q: %+v", in, b)
		require.True(t, b.Share >= minClassShare && b.Share <= 1, "%q: share %v", in, b.Share)
		again, err := ParseBurstSpec(b.String())
		require.NoError(t, err, "%q -> %q", in, b.String())
		require.Equal(t, b, again, "%q -> %q", in, b.String())
	})
}
