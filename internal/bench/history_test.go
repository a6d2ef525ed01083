package bench

import (
	"encoding/json"
	"os"
	"testing"
)

// TestHistoryVerifyScale is the `make bench` row of `buildlock history
// verify`: histories of 1,000 and 10,000 commits on the emulator, with the
// requests reading them took and the wall time. A broken request bound or a
// history that does not verify clean fails it. Under -race or -short it
// runs one small history.
func TestHistoryVerifyScale(t *testing.T) {
	targets := []int{1000, 10000}
	if raceEnabled || testing.Short() {
		targets = []int{200}
	}
	rows, err := HistoryScale(targets)
	if os.Getenv("BENCH_JSON") == "1" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			History []HistoryRow `json:"history_verify"`
		}{rows}); err != nil {
			t.Fatal(err)
		}
	} else if err := RenderHistory(os.Stdout, rows); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Commits < targets[0] {
			t.Errorf("generated %d commits, fewer than %d", r.Commits, targets[0])
		}
	}
}
