package lockaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// HeldMarker is acquire's note to the later steps of the same job that it
// was admitted: the evidence release and the post step use to refuse a
// "nothing to release" conclusion drawn from one possibly stale read. It
// lives in RUNNER_TEMP, which the runner creates per job, shares between
// all steps of that job and empties when the job ends
// (https://docs.github.com/en/actions/reference/workflows-and-actions/variables),
// so no input has to carry it and no other job can see it.
type HeldMarker struct {
	Repository   string `json:"repository"`
	Lock         string `json:"lock"`
	HolderID     string `json:"holderId"`
	StateSHA     string `json:"stateSha"`
	FencingToken int64  `json:"fencingToken,omitempty"`
	// StateUpdatedAt is the updatedAt of that version (lockstate.FormatTime):
	// the floor below which a read of the same job's release or post step
	// is a lagging replica (SeedAdmissionFloor).
	StateUpdatedAt string `json:"stateUpdatedAt,omitempty"`
	// NoticedAt is when acquire saw itself admitted (lockstate.FormatTime,
	// the runner's clock): the start of the hold the release logs
	// (NoticedAt, lockstate.RecentHold).
	NoticedAt string `json:"noticedAt,omitempty"`
}

// heldMarkerPath names the marker of holderID on t under dir (the job's
// RUNNER_TEMP, see RunnerTemp), or "" without one (a local run: no evidence
// is kept).
func heldMarkerPath(dir string, t Target, holderID string) string {
	return MarkerPath(dir, t, holderID, "held-", ".json")
}

// MarkerPath names one of the per-job notes an action leaves its job's
// later steps in RUNNER_TEMP (dir) about holderID on t: prefix plus a hash
// of the lock and the holder id plus ext, under ambiguous-build-lock/. It
// is "" without a RUNNER_TEMP (a local run keeps no notes).
func MarkerPath(dir string, t Target, holderID, prefix, ext string) string {
	return notePath(dir, prefix, ext, t.Repository(), t.Lock, holderID)
}

// notePath names a note in RUNNER_TEMP (dir) under ambiguous-build-lock/:
// prefix plus a hash of the key's parts plus ext, or "" without a
// RUNNER_TEMP.
func notePath(dir, prefix, ext string, key ...string) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	return filepath.Join(dir, "ambiguous-build-lock", prefix+hex.EncodeToString(sum[:16])+ext)
}

// readNoteFile decodes the note at path into v. A missing path, an
// unreadable file or one that is not JSON is no note: false, and the
// caller does without it (a lookup or a read of its own).
func readNoteFile(path string, v any) bool {
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(data, v) == nil
}

// WriteMarkerFile writes a note at path (MarkerPath) whole: to a temporary
// file renamed over it, so a later step never reads half of one.
func WriteMarkerFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteHeldMarker records that holderID holds a seat of t. Failing to write
// it only weakens later stale-read checks, so callers warn and go on.
func WriteHeldMarker(runnerTemp string, t Target, m HeldMarker) error {
	p := heldMarkerPath(runnerTemp, t, m.HolderID)
	if p == "" {
		return nil
	}
	m.Repository, m.Lock = t.Repository(), t.Lock
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return WriteMarkerFile(p, data)
}

// ReadHeldMarker returns the marker of holderID on t, if this job's acquire
// left one.
func ReadHeldMarker(runnerTemp string, t Target, holderID string) (HeldMarker, bool) {
	p := heldMarkerPath(runnerTemp, t, holderID)
	if p == "" {
		return HeldMarker{}, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return HeldMarker{}, false
	}
	var m HeldMarker
	if json.Unmarshal(data, &m) != nil || m.HolderID != holderID || m.Lock != t.Lock || m.Repository != t.Repository() {
		return HeldMarker{}, false
	}
	return m, true
}

// NoticedAt is when this job's acquire saw itself admitted, from its
// marker; ok is false without one (no marker, or one from an older build).
func NoticedAt(runnerTemp string, t Target, holderID string) (time.Time, bool) {
	m, ok := ReadHeldMarker(runnerTemp, t, holderID)
	if !ok {
		return time.Time{}, false
	}
	return lockstate.ParseTime(m.NoticedAt)
}

// SeedAdmissionFloor tells st the version in which this job's acquire saw
// itself admitted (store.Store.SeenAt), when the acquire left a marker
// with one: a read of the state older than that version is a lagging
// replica (docs/emulator.md "Replica lag"), and a release decided on it
// (the entry still queued, or not there yet) is a compare-and-swap certain
// to lose, one content-creating request the writer App's secondary limit
// counts. The store reads at the branch head instead. It makes no request.
func SeedAdmissionFloor(st *store.Store, runnerTemp string, t Target, holderID string) {
	m, ok := ReadHeldMarker(runnerTemp, t, holderID)
	if !ok {
		return
	}
	if at, ok := lockstate.ParseTime(m.StateUpdatedAt); ok {
		st.SeenAt(at)
	}
}

// An entry marker is acquire's note that it wrote (or may have written) an
// entry of holderID into t, a queue entry or an admission: the evidence
// that makes a later "nothing of this job" read worth confirming at the
// branch head even when no admission was recorded (an acquire step killed
// while it waited leaves a queue entry that only the post step removes).
func entryMarkerPath(dir string, t Target, holderID string) string {
	return MarkerPath(dir, t, holderID, "entry-", "")
}

// WriteEntryMarker records that this job's acquire wrote an entry of
// holderID into t. Failing to write it only weakens later stale-read
// checks, so callers go on.
func WriteEntryMarker(runnerTemp string, t Target, holderID string) error {
	p := entryMarkerPath(runnerTemp, t, holderID)
	if p == "" {
		return nil
	}
	return WriteMarkerFile(p, []byte(holderID))
}

// hasEntryMarker reports whether this job's acquire left an entry marker
// of holderID on t.
func hasEntryMarker(runnerTemp string, t Target, holderID string) bool {
	p := entryMarkerPath(runnerTemp, t, holderID)
	if p == "" {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && string(data) == holderID
}

// RemoveEntryMarkers deletes the held and entry markers of holderID on t
// once nothing of it is left in the state (a release or a cleanup that
// removed its entries, or confirmed at the branch head that none is left).
func RemoveEntryMarkers(runnerTemp string, t Target, holderID string) error {
	return errors.Join(removeMarkerFile(heldMarkerPath(runnerTemp, t, holderID)),
		removeMarkerFile(entryMarkerPath(runnerTemp, t, holderID)))
}

// removeMarkerFile deletes a note at path (MarkerPath); "" (no RUNNER_TEMP)
// and a note already gone are not errors.
func removeMarkerFile(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// FreshCheck is what CheckHeldAbsence found.
type FreshCheck struct {
	// Checked is true when this job's acquire left its marker, so the
	// absence was checked at the branch head.
	Checked bool
	// Found is true when the state at the head shows holderID as a holder
	// or in the queue: the first read was stale, and the cleanup must be
	// decided again (the store's next Update starts from that state).
	Found bool
	// Commit is the head commit the check read.
	Commit string
}

// CheckHeldAbsence is the stale-read guard of every "nothing to release"
// conclusion: when this job's acquire recorded an admission (HeldMarker) or
// an entry (WriteEntryMarker) but a cleanup found nothing of holderID, it
// reads the state at the state branch's head commit (store.LoadFresh),
// which a lagging replica cannot serve from an older version. Without a
// marker nothing is read.
func CheckHeldAbsence(ctx context.Context, st *store.Store, runnerTemp string, t Target, holderID string) (FreshCheck, error) {
	if _, held := ReadHeldMarker(runnerTemp, t, holderID); !held && !hasEntryMarker(runnerTemp, t, holderID) {
		return FreshCheck{}, nil
	}
	return checkAtHead(ctx, st, t, holderID, "this job's acquire was admitted to %s but the state read shows nothing of %s")
}

// ConfirmAbsenceAtHead is CheckHeldAbsence without the marker: release
// confirms every "nothing to release" at the branch head, since the job
// releasing a holder id is not always the one whose acquire admitted it
// (the hosted fallback release of a crashed licensed job, a re-run). It
// costs two reads (the ref and the file at its commit), only on a release
// that found nothing.
func ConfirmAbsenceAtHead(ctx context.Context, st *store.Store, t Target, holderID string) (FreshCheck, error) {
	return checkAtHead(ctx, st, t, holderID, "the state read of %s shows nothing of %s")
}

func checkAtHead(ctx context.Context, st *store.Store, t Target, holderID, what string) (FreshCheck, error) {
	snap, commit, err := st.LoadFresh(ctx)
	if err != nil {
		return FreshCheck{Checked: true}, fmt.Errorf(what+", and confirming that at the branch head failed: %w", t.Lock, holderID, err)
	}
	found := lockstate.HolderIndex(snap.State, holderID) >= 0 || lockstate.QueuePosition(snap.State, holderID) > 0
	return FreshCheck{Checked: true, Found: found, Commit: commit}, nil
}
