package runners_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

var unitySet = runners.LabelSet{"self-hosted", "windows", "unity"}

func rn(id int64, name, status string, busy bool, labels ...string) runners.Runner {
	return runners.Runner{ID: id, Name: name, Status: status, Busy: busy, Labels: labels, GroupID: 1}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		runners                    []runners.Runner
		available, offline, busy   bool
		matched, online, busyCount int
	}{
		"no runners": {nil, false, false, false, 0, 0, 0},
		"labels compared case-insensitively": {
			[]runners.Runner{rn(1, "win-1", "online", false, "self-hosted", "Windows", "UNITY")}, true, false, false, 1, 1, 0},
		"missing one label": {
			[]runners.Runner{rn(1, "win-1", "online", false, "self-hosted", "Windows")}, false, false, false, 0, 0, 0},
		"extra labels are fine": {
			[]runners.Runner{rn(1, "win-1", "online", false, "self-hosted", "Windows", "X64", "unity", "gpu")}, true, false, false, 1, 1, 0},
		"all offline passes": {
			[]runners.Runner{rn(1, "win-1", "offline", false, "self-hosted", "windows", "unity"), rn(2, "win-2", "offline", false, "self-hosted", "windows", "unity")},
			true, true, false, 2, 0, 0},
		"all busy passes": {
			[]runners.Runner{rn(1, "win-1", "online", true, "self-hosted", "windows", "unity"), rn(2, "win-2", "online", true, "self-hosted", "windows", "unity")},
			true, false, true, 2, 2, 2},
		"one free": {
			[]runners.Runner{rn(1, "win-1", "online", true, "self-hosted", "windows", "unity"), rn(2, "win-2", "online", false, "self-hosted", "windows", "unity")},
			true, false, false, 2, 2, 1},
		"unknown status is not online": {
			[]runners.Runner{rn(1, "win-1", "starting", false, "self-hosted", "windows", "unity")}, true, true, false, 1, 0, 0},
		"duplicates counted once": {
			[]runners.Runner{rn(1, "win-1", "online", false, "self-hosted", "windows", "unity"), rn(1, "win-1", "online", false, "self-hosted", "windows", "unity")},
			true, false, false, 1, 1, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep := runners.Evaluate([]runners.LabelSet{unitySet}, tc.runners)
			s := rep.Sets[0]
			assert.Equal(t, tc.available, s.Available(), "available")
			assert.Equal(t, tc.offline, s.AllOffline(), "all offline")
			assert.Equal(t, tc.busy, s.AllBusy(), "all busy")
			assert.Len(t, s.Runners, tc.matched)
			assert.Equal(t, tc.online, s.Online)
			assert.Equal(t, tc.busyCount, s.Busy)
			assert.Equal(t, !tc.available, len(rep.Missing()) == 1)
		})
	}
}

func TestEvaluateCountsEveryRegisteredRunner(t *testing.T) {
	t.Parallel()
	rep := runners.Evaluate([]runners.LabelSet{unitySet, {"self-hosted", "linux"}}, []runners.Runner{
		rn(3, "b-linux", "online", true, "self-hosted", "Linux"),
		rn(1, "win-z", "offline", false, "self-hosted", "Windows", "unity"),
		rn(2, "win-a", "online", false, "self-hosted", "Windows", "unity"),
		rn(4, "mac", "online", false, "self-hosted", "macOS"),
	})
	assert.Equal(t, 4, rep.Registered)
	assert.Equal(t, 3, rep.Online)
	assert.Equal(t, 1, rep.Busy)
	assert.Equal(t, "win-a, win-z", runners.RunnerNames(rep.Sets[0].Runners), "sorted by name")
	assert.Empty(t, rep.Missing())
}

func TestRunnerNamesAreBoundedAndPrintable(t *testing.T) {
	t.Parallel()
	var rs []runners.Runner
	for i := range 25 {
		rs = append(rs, rn(int64(i+1), "r\n::error::x", "online", false))
	}
	s := runners.RunnerNames(rs)
	assert.NotContains(t, s, "\n")
	assert.True(t, strings.HasSuffix(s, " and 5 more"), s)
	assert.Equal(t, "(unnamed)", runners.DisplayName(""))
	assert.Len(t, []rune(runners.DisplayName(strings.Repeat("x", 300))), 101)
}

func TestValidID(t *testing.T) {
	t.Parallel()
	assert.True(t, runners.ValidID(1))
	assert.True(t, runners.ValidID(runners.MaxSafeInteger))
	assert.False(t, runners.ValidID(0))
	assert.False(t, runners.ValidID(-5))
	assert.False(t, runners.ValidID(runners.MaxSafeInteger+1))
}

// Properties of Evaluate over random inventories: a set is available
// exactly when some runner carries all its labels (whatever the case), the
// counts never exceed the matches, and listing a runner twice changes
// nothing.
func TestEvaluateProperties(t *testing.T) {
	t.Parallel()
	vocab := []string{"self-hosted", "Windows", "windows", "Linux", "unity", "UNITY", "gpu", "X64"}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "runners")
		var rs []runners.Runner
		for i := range n {
			labels := rapid.SliceOfDistinct(rapid.SampledFrom(vocab), rapid.ID[string]).Draw(t, "labels")
			rs = append(rs, rn(int64(i+1), "r", rapid.SampledFrom([]string{"online", "offline"}).Draw(t, "status"), rapid.Bool().Draw(t, "busy"), labels...))
		}
		set := runners.LabelSet{"self-hosted", "windows", "unity"}
		rep := runners.Evaluate([]runners.LabelSet{set}, rs)
		want := false
		for _, r := range rs {
			all := true
			for _, l := range set {
				found := false
				for _, have := range r.Labels {
					found = found || strings.EqualFold(have, l)
				}
				all = all && found
			}
			want = want || all
		}
		s := rep.Sets[0]
		if s.Available() != want {
			t.Fatalf("available=%v, want %v", s.Available(), want)
		}
		if s.Online > len(s.Runners) || s.Busy > len(s.Runners) || rep.Registered != n {
			t.Fatalf("counts out of range: %+v", rep)
		}
		again := runners.Evaluate([]runners.LabelSet{set}, append(append([]runners.Runner{}, rs...), rs...))
		if again.Registered != rep.Registered || len(again.Sets[0].Runners) != len(s.Runners) {
			t.Fatal("duplicates changed the verdict")
		}
	})
}

// TestLabelsLowercaseAsJavaScriptDoes: labels are lowercased with
// String.prototype.toLowerCase, as the reference lowercases them, not with
// Go's simple mapping: "İ" becomes "i̇" (i and a combining dot), so a
// required "İstanbul" matches a runner label "İSTANBUL" or "i̇stanbul" but
// not "istanbul", and a final capital sigma becomes ς.
func TestLabelsLowercaseAsJavaScriptDoes(t *testing.T) {
	t.Parallel()
	sets, err := runners.ParseLabelSets(`[["self-hosted","İstanbul","ΟΔΟΣ"]]`)
	if !assert.NoError(t, err) {
		return
	}
	assert.Equal(t, runners.LabelSet{"self-hosted", "i\u0307stanbul", "οδος"}, sets[0])
	for label, match := range map[string]bool{"İSTANBUL": true, "i\u0307stanbul": true, "istanbul": false, "Istanbul": false} {
		rep := runners.Evaluate(sets, []runners.Runner{rn(1, "r", "online", false, "self-hosted", label, "οδος")})
		assert.Equal(t, match, rep.Sets[0].Available(), "runner label %q", label)
	}
}
