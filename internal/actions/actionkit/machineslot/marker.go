package machineslot

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// Marker is acquire's note to the job's release and post steps of what
// they need to free the machine slot: the directory, the holder id and the
// owner (the machine queue releases only the owner's own entry). Acquire
// writes it before it joins the machine queue (Slot 0) and again once it
// holds a slot, so a step killed at any point after joining leaves one; it
// lives in RUNNER_TEMP beside lockaction.HeldMarker (per job, emptied when
// the job ends).
type Marker struct {
	Repository string     `json:"repository"`
	Lock       string     `json:"lock"`
	HolderID   string     `json:"holderId"`
	Dir        string     `json:"dir"`
	Owner      mq.Process `json:"owner"`
	Slots      int        `json:"slots"`
	// Slot is the held slot, 0 while the job waits.
	Slot int `json:"slot,omitempty"`
}

func markerPath(runnerTemp string, t lockaction.Target, holderID string) string {
	return lockaction.MarkerPath(runnerTemp, t, holderID, "machine-", ".json")
}

// WriteMarker records m for holderID on t under runnerTemp ("" in a local
// run: nothing is kept, and a slot is freed only by its owner's end).
func WriteMarker(runnerTemp string, t lockaction.Target, m Marker) error {
	p := markerPath(runnerTemp, t, m.HolderID)
	if p == "" {
		return nil
	}
	m.Repository, m.Lock = t.Repository(), t.Lock
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return lockaction.WriteMarkerFile(p, data)
}

// ReadMarker returns the marker of holderID on t, if this job's acquire
// left one. A marker that does not decode or names another lock is
// reported as absent with its error.
func ReadMarker(runnerTemp string, t lockaction.Target, holderID string) (Marker, bool, error) {
	p := markerPath(runnerTemp, t, holderID)
	if p == "" {
		return Marker{}, false, nil
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Marker{}, false, nil
	}
	if err != nil {
		return Marker{}, false, err
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil {
		return Marker{}, false, err
	}
	if m.HolderID != holderID || m.Lock != t.Lock || m.Repository != t.Repository() || !filepath.IsAbs(m.Dir) || m.Owner.IsZero() {
		return Marker{}, false, errors.New("the machine slot marker " + p + " names another job or is incomplete")
	}
	return m, true, nil
}

// RemoveMarker deletes the marker once the slot is free.
func RemoveMarker(runnerTemp string, t lockaction.Target, holderID string) error {
	p := markerPath(runnerTemp, t, holderID)
	if p == "" {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
