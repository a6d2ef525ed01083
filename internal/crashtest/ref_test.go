package crashtest

import (
	"context"
	"testing"
	"testing/synctest"
)

// reference runs sc fault-free with no competitors and returns the
// victim's request sequence.
func reference(t *testing.T, sc scenario) []request {
	var reqs []request
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, sc.config)
		v := sc.setup(context.Background(), t, w)
		tr := newCut(w.Em.Transport(), nil, nil)
		if err := v.run(context.Background(), tr); err != nil {
			t.Fatalf("reference run of %s failed: %v\n%s", sc.name, err, v.stdout)
		}
		reqs = tr.Requests()
	})
	return reqs
}

func TestReferenceSequences(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			a := reference(t, sc)
			b := reference(t, sc)
			t.Logf("%s: %d requests, %d boundaries\n%s", sc.name, len(a), len(boundaries(a)), describe(a))
			if describe(a) != describe(b) {
				t.Fatalf("reference of %s is not deterministic:\n%s\nvs\n%s", sc.name, describe(a), describe(b))
			}
		})
	}
}
