package crashtest

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// reference runs sc fault-free with no competitors and returns the
// victim's request sequence.
func reference(t *testing.T, sc scenario) []request {
	var reqs []request
	synctest.Test(t, func(t *testing.T) {
		w := newWorldAt(t, sc.config, sc.stateSchema())
		v := sc.setup(context.Background(), t, w)
		tr := newCut(w.Em.Transport(), nil, nil)
		require.NoError(t, v.run(context.Background(), tr), "reference run of %s failed\n%s", sc.name, v.stdout)
		if sc.refSays != "" {
			require.Contains(t, v.stdout.String(), sc.refSays, "the reference run of %s does not reach its path", sc.name)
		}
		out := readOutputs(v.outPath)
		for k, want := range sc.refOutputs {
			require.Equal(t, want, out[k], "the reference run of %s: output %s", sc.name, k)
		}
		reqs = tr.Requests()
		w.background.Wait()
	})
	return reqs
}

func TestReferenceSequences(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			a := reference(t, sc)
			b := reference(t, sc)
			t.Logf("%s: %d requests, %d boundaries\n%s", sc.name, len(a), len(boundaries(a)), describe(a))
			require.Equal(t, describe(b), describe(a), "reference of %s is not deterministic:\n%s\nvs\n%s", sc.name, describe(a), describe(b))
		})
	}
}
