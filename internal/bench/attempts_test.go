package bench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

const (
	testStateRoute = "/repos/{owner}/{repo}/contents/{path}"
	testStatePath  = "/repos/o/r/contents/" + simStatePath
)

func stateRead(id string, lagged bool) emulator.RequestRecord {
	return emulator.RequestRecord{ID: id, Method: "GET", Route: "GET " + testStateRoute, Path: testStatePath, Status: 200, LaggedRead: lagged}
}

func stateWrite(id string, status int) emulator.RequestRecord {
	return emulator.RequestRecord{ID: id, Method: "PUT", Route: "PUT " + testStateRoute, Path: testStatePath, Status: status}
}

func TestWriteOutcome(t *testing.T) {
	fresh, lagged := stateRead("r1", false), stateRead("r2", true)
	headMoved := stateWrite("w", 409)
	headMoved.BranchHeadConflict = true
	refused := stateWrite("w", 403)
	refused.Secondary = emulator.SecondaryContentMinute
	cases := []struct {
		name string
		w    emulator.RequestRecord
		read *emulator.RequestRecord
		want string
	}{
		{"landed", stateWrite("w", 201), &lagged, outcomeLanded},
		{"refused by a secondary limit", refused, &fresh, "refused: content-per-minute"},
		{"another write landed while it committed, whatever the read", headMoved, &lagged, outcomeLostCommit},
		{"decided on a lagged read", stateWrite("w", 409), &lagged, outcomeLostLagged},
		{"another write landed since a fresh read", stateWrite("w", 409), &fresh, outcomeLostChanged},
		{"422 is a lost race too", stateWrite("w", 422), &fresh, outcomeLostChanged},
		{"no read before it", stateWrite("w", 409), nil, outcomeLostChanged},
		{"any other answer by its status", stateWrite("w", 500), &fresh, "answered 500"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, writeOutcome(c.w, c.read), c.name)
	}
}

func TestCountAttempts(t *testing.T) {
	refusedRead := stateRead("r3", false)
	refusedRead.Secondary, refusedRead.Status = emulator.SecondaryPoints, 403
	config := emulator.RequestRecord{ID: "c1", Method: "GET", Route: "GET " + testStateRoute, Path: "/repos/o/r/contents/locks/x.config.json", Status: 200}
	other := emulator.RequestRecord{ID: "o1", Method: "PUT", Route: "PUT " + testStateRoute, Path: "/repos/o/r/contents/elsewhere.json", Status: 409}
	recs := []emulator.RequestRecord{
		config,
		stateRead("r1", true),
		stateWrite("w1", 409), // decided on the lagged read r1
		refusedRead,           // a refused read is not the read a write decides on
		stateWrite("w2", 409),
		stateRead("r2", false),
		stateWrite("w3", 200),
		other, // not the state file
		stateRead("r4", false),
		stateWrite("w4", 200),
	}
	phase := map[string]string{"w4": "release", "r4": "release"}
	var a Attempts
	a.countAttempts(recs, phase)
	assert.Equal(t, map[string]int{
		"other: " + outcomeLostLagged: 2,
		"other: " + outcomeLanded:     1,
		"release: " + outcomeLanded:   1,
	}, a.Writes)
	assert.Equal(t, map[string]int{"other: points-per-minute: state read (200)": 1}, a.Secondary)

	var sum Attempts
	sum.add(a)
	sum.add(a)
	assert.Equal(t, 4, sum.Writes["other: "+outcomeLostLagged])
	assert.Equal(t, 2, sum.Secondary["other: points-per-minute: state read (200)"])
	assert.Equal(t, 2, a.Writes["other: "+outcomeLostLagged], "add leaves its argument alone")
}

func TestRenderAttempts(t *testing.T) {
	r := &Result{Name: "class-40x4@500ms", Admitted: 4, Attempts: Attempts{Writes: map[string]int{
		"acquire: " + outcomeLanded:     4,
		"acquire: " + outcomeLostCommit: 6,
		"release: " + outcomeLanded:     4,
	}}}
	var b bytes.Buffer
	require.NoError(t, RenderAttempts(&b, []*Result{r}))
	assert.Equal(t, "40x4@500ms (4 admitted jobs):\n"+
		"  state writes:\n"+
		"        6   1.50 a job  acquire: lost: another write landed while it committed\n"+
		"        4   1.00 a job  acquire: landed\n"+
		"        4   1.00 a job  release: landed\n"+
		"  secondary-limit answers: none\n", b.String())
}

func TestMergeSumsAttempts(t *testing.T) {
	a := &Result{Name: "x", Admitted: 1, Attempts: Attempts{Writes: map[string]int{"acquire: landed": 1}}}
	b := &Result{Name: "x", Admitted: 2, Attempts: Attempts{Writes: map[string]int{"acquire: landed": 2}, Secondary: map[string]int{"k": 1}}}
	m := Merge(Workload{Name: "x"}, []*Result{a, b})
	require.NotNil(t, m)
	assert.Equal(t, Attempts{Writes: map[string]int{"acquire: landed": 3}, Secondary: map[string]int{"k": 1}}, m.Attempts)
}
