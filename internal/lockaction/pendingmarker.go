package lockaction

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// InFlightWindow bounds how long after it was sent a write of a step that
// died mid-request can still land. GitHub ends a REST request it has
// processed for more than 10 seconds with a timeout (its REST API
// troubleshooting page, "Timeouts"); 5 seconds more cover the answer's
// way back and clock steps between the two steps of one job.
const InFlightWindow = 15 * time.Second

// A pending-write marker is acquire's note, in RUNNER_TEMP like the
// HeldMarker, that it sent a write of holderID's entry and has no answer
// yet. acquire removes it when the answer arrives; one left behind means
// the acquire step died (a SIGKILL, a runner that lost the step) while a
// join or an admission was in flight, and that write can land after the
// job's release read the state (TestMachineQueueAcceptance: a release
// found nothing, and the admission landed after it, a seat held until the
// reaper).
func pendingMarkerPath(dir string, t Target, holderID string) string {
	return MarkerPath(dir, t, holderID, "pending-", "")
}

// WritePendingMarker records that a write of holderID's entry of t was sent
// at sentAt. Failing to write it only weakens the later check, so callers
// go on.
func WritePendingMarker(runnerTemp string, t Target, holderID string, sentAt time.Time) error {
	p := pendingMarkerPath(runnerTemp, t, holderID)
	if p == "" {
		return nil
	}
	return WriteMarkerFile(p, []byte(strconv.FormatInt(sentAt.UnixMilli(), 10)))
}

// RemovePendingMarker deletes the marker: the write was answered.
func RemovePendingMarker(runnerTemp string, t Target, holderID string) error {
	return removeMarkerFile(pendingMarkerPath(runnerTemp, t, holderID))
}

// readPendingMarker returns when the unanswered write was sent.
func readPendingMarker(runnerTemp string, t Target, holderID string) (time.Time, bool) {
	p := pendingMarkerPath(runnerTemp, t, holderID)
	if p == "" {
		return time.Time{}, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// AwaitInFlightWrite is the last guard of a "nothing to release"
// conclusion already confirmed at the branch head: when this job's acquire
// left a pending-write marker (it died with a write in flight), it waits
// until InFlightWindow after that write was sent (at once when that has
// passed) and reads the state at the branch head again. Found says the
// late write landed and the cleanup must be decided again. Without a
// marker it reads nothing. The marker is removed either way.
func AwaitInFlightWrite(ctx context.Context, st *store.Store, clk clock.Clock, runnerTemp string, t Target, holderID string) (FreshCheck, error) {
	sentAt, ok := readPendingMarker(runnerTemp, t, holderID)
	if !ok {
		return FreshCheck{}, nil
	}
	defer func() { _ = RemovePendingMarker(runnerTemp, t, holderID) }()
	if wait := sentAt.Add(InFlightWindow).Sub(clk.Now()); wait > 0 {
		if err := clk.Sleep(ctx, min(wait, InFlightWindow)); err != nil {
			return FreshCheck{}, err
		}
	}
	return checkAtHead(ctx, st, t, holderID, "this job's acquire died with a write of %s in flight and the first check showed nothing of %s")
}
