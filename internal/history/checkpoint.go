package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// CheckpointVersion is the format version of Checkpoint.
const CheckpointVersion = 1

// MaxRecent bounds Checkpoint.Recent: enough commits to name the first one a
// rewrite removed after months of daily runs (about 40 KB of JSON).
const MaxRecent = 1000

// MaxCheckpointBytes bounds a checkpoint file: the head version (a state
// file, at most 1 MiB) plus the recent commit list.
const MaxCheckpointBytes = 2 << 20

// Checkpoint is what a verify run leaves for the next one: the last commit
// it verified clean (whose version is the next run's Base, so it is never
// read again) and the most recent verified commit ids (to name the first
// commit a force-push removed). It advances only over clean or acknowledged
// commits, so a violation is reported again by every run until an operator
// acknowledges it.
type Checkpoint struct {
	Version    int    `json:"version"`
	Repository string `json:"repository"`
	Branch     string `json:"branch"`
	Lock       string `json:"lock"`
	// Head is the last verified commit and the state it left.
	Head CheckpointHead `json:"head"`
	// Recent are verified commit ids, oldest first, ending with Head.SHA
	// (at most MaxRecent).
	Recent []string `json:"recent"`
	// Commits counts the commits verified by every run so far.
	Commits int `json:"commits"`
	// MaxFencingToken is the largest fencing token seen so far.
	MaxFencingToken int64 `json:"max_fencing_token"`
	// Reclaimed are the quarantines that verified same-runner reclaims of
	// current holders consumed, by holderId: a later pre-activation
	// retraction may put exactly that quarantine back.
	Reclaimed map[string]lockstate.Reservation `json:"reclaimed,omitempty"`
	// UpdatedAt is when the checkpoint was written.
	UpdatedAt time.Time `json:"updated_at"`
}

// CheckpointHead is the checkpoint's last verified version.
type CheckpointHead struct {
	SHA     string    `json:"sha"`
	Time    time.Time `json:"time"`
	BlobSHA string    `json:"blob_sha"`
	// Content is the state file's text at SHA ("" when the file was
	// deleted there).
	Content string `json:"content"`
}

var hexSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// DecodeCheckpoint parses and validates a checkpoint file. Unknown fields,
// trailing data, another format version and malformed commit ids are
// refused: a checkpoint decides which commits are never read again, so a
// doubtful one must not be used.
func DecodeCheckpoint(data []byte) (*Checkpoint, error) {
	if len(data) > MaxCheckpointBytes {
		return nil, fmt.Errorf("checkpoint is %d bytes, above the %d-byte bound", len(data), MaxCheckpointBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cp Checkpoint
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("checkpoint is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("checkpoint has data after the JSON object")
	}
	switch {
	case cp.Version != CheckpointVersion:
		return nil, fmt.Errorf("checkpoint format version %d is not %d", cp.Version, CheckpointVersion)
	case cp.Lock == "" || cp.Branch == "" || cp.Repository == "":
		return nil, fmt.Errorf("checkpoint lacks its repository, branch or lock")
	case !hexSHA.MatchString(cp.Head.SHA):
		return nil, fmt.Errorf("checkpoint head %q is not a commit id", cp.Head.SHA)
	case len(cp.Recent) == 0 || len(cp.Recent) > MaxRecent || cp.Recent[len(cp.Recent)-1] != cp.Head.SHA:
		return nil, fmt.Errorf("checkpoint recent commits must end with the head and hold at most %d", MaxRecent)
	case cp.Commits < len(cp.Recent):
		return nil, fmt.Errorf("checkpoint counts %d commits but lists %d", cp.Commits, len(cp.Recent))
	case cp.Head.Content != "" && cp.Head.BlobSHA != blobSHA([]byte(cp.Head.Content)):
		return nil, fmt.Errorf("checkpoint head content does not hash to its blob %s", cp.Head.BlobSHA)
	}
	seen := make(map[string]bool, len(cp.Recent))
	for _, s := range cp.Recent {
		if !hexSHA.MatchString(s) || seen[s] {
			return nil, fmt.Errorf("checkpoint recent commit %q is malformed or repeated", s)
		}
		seen[s] = true
	}
	return &cp, nil
}

// Encode renders the checkpoint as indented JSON with a final newline.
func (cp *Checkpoint) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// BaseVersion is the checkpoint's head as a Version (Input.Base).
func (cp *Checkpoint) BaseVersion() *Version {
	v := &Version{Commit: Commit{SHA: cp.Head.SHA, Time: cp.Head.Time}, BlobSHA: cp.Head.BlobSHA}
	if cp.Head.BlobSHA != "" {
		v.Content = []byte(cp.Head.Content)
	}
	return v
}

// NextCheckpoint returns the checkpoint after res: prev (nil on a first
// run) advanced over res.Verified, the commits this run may move past. It
// returns prev unchanged when nothing new was verified, and nil when there
// is neither.
func NextCheckpoint(prev *Checkpoint, res *Result, repository, branch string, now time.Time) *Checkpoint {
	if len(res.Verified) == 0 {
		return prev
	}
	var cp Checkpoint
	if prev != nil && !res.Rebased {
		cp = *prev
		cp.Recent = append([]string(nil), prev.Recent...)
	}
	cp.Version, cp.Repository, cp.Branch, cp.Lock = CheckpointVersion, repository, branch, res.Lock
	last := res.Verified[len(res.Verified)-1]
	cp.Head = CheckpointHead{SHA: last.SHA, Time: last.Time.UTC(), BlobSHA: last.BlobSHA, Content: string(last.Content)}
	for _, v := range res.Verified {
		cp.Recent = append(cp.Recent, v.SHA)
	}
	if len(cp.Recent) > MaxRecent {
		cp.Recent = cp.Recent[len(cp.Recent)-MaxRecent:]
	}
	cp.Commits += len(res.Verified)
	cp.MaxFencingToken = max(cp.MaxFencingToken, res.MaxFencingToken)
	cp.Reclaimed = res.Reclaimed
	cp.UpdatedAt = now.UTC()
	return &cp
}
