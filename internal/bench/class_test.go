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
		{"80x2@200ms", BurstSpec{Jobs: 80, Seats: 2, Spacing: 200 * time.Millisecond, Hold: DefaultClassHold}, "80x2@200ms"},
		{" 40x4@1s/30s ", BurstSpec{Jobs: 40, Seats: 4, Spacing: time.Second, Hold: 30 * time.Second}, "40x4@1s/30s"},
		{"1x1@1ms/5s", BurstSpec{Jobs: 1, Seats: 1, Spacing: time.Millisecond, Hold: 5 * time.Second}, "1x1@1ms"},
		{"1000x64@1h/1h", BurstSpec{Jobs: 1000, Seats: 64, Spacing: time.Hour, Hold: time.Hour}, "1000x64@1h0m0s/1h0m0s"},
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
	}
	for in, why := range bad {
		_, err := ParseBurstSpec(in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), why, "%q", in)
		assert.Contains(t, err.Error(), "JOBSxSEATS@SPACING[/HOLD]", "%q: the error shows the syntax", in)
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

	grid := ClassGrid()
	assert.Len(t, grid, 26)
	seen := map[string]bool{}
	for _, b := range grid {
		assert.False(t, seen[b.String()], "cell %s twice", b)
		seen[b.String()] = true
	}
	assert.True(t, seen["80x4@100ms"], "the grid holds bench burst-40x4's spacing and seats")
	assert.True(t, seen["10x1@1s"], "and a small queue on one seat")
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
