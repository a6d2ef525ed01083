package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// Bounds of one snapshot. A repository beyond them is read as far as the
// bounds allow and the rest is a gap (a finding), never silently dropped.
const (
	// MaxFileBytes is the largest workflow or action file read (1 MiB;
	// GitHub itself refuses workflow files far smaller).
	MaxFileBytes = 1 << 20
	// MaxFiles bounds the files of one snapshot.
	MaxFiles = 512
	// MaxRounds bounds the reference-following rounds (composite actions
	// calling composites, reusable workflows calling reusable workflows).
	MaxRounds = 16
	// WorkflowDir is where GitHub loads workflows from.
	WorkflowDir = ".github/workflows"
)

// Gap reasons (policy.Gap.Reason).
const (
	ReasonNotFound    = "not-found"
	ReasonTruncated   = "tree-truncated"
	ReasonTooLarge    = "too-large"
	ReasonTooMany     = "too-many-files"
	ReasonUnreadable  = "unreadable"
	ReasonNoAccess    = "not-accessible"
	ReasonIntegrity   = "blob-integrity"
	ReasonNotRegular  = "not-a-regular-file"
	ReasonMovedHead   = "head-moved"
	ReasonBranch      = "default-branch-mismatch"
	ReasonForkChanged = "fork-mismatch"
)

// Errors a Source returns; anything else is an unreadable gap.
var (
	// ErrNotFound: the path does not exist at the commit.
	ErrNotFound = errors.New("snapshot: not found")
	// ErrTruncated: a tree listing was truncated.
	ErrTruncated = errors.New("snapshot: tree listing truncated")
	// ErrTooLarge: a file exceeds MaxFileBytes.
	ErrTooLarge = errors.New("snapshot: file too large")
	// ErrIntegrity: a blob's content does not hash to its id.
	ErrIntegrity = errors.New("snapshot: blob content does not match its id")
	// ErrNotRegular: the path is not a regular file (a symlink, a
	// submodule).
	ErrNotRegular = errors.New("snapshot: not a regular file")
)

// Entry is one directory entry.
type Entry struct {
	// Name is the entry's base name.
	Name string
	// Dir is true for a directory.
	Dir bool
}

// Source reads one repository at one commit.
type Source interface {
	// List returns the entries directly in dir ("" is the root).
	List(ctx context.Context, dir string) ([]Entry, error)
	// Read returns a file's content (at most MaxFileBytes).
	Read(ctx context.Context, p string) ([]byte, error)
}

// RemoteReader reads a file of another repository at a commit, for
// pinned remote reusable workflows. It returns ErrNotFound (or any error)
// when it cannot; the reference then stays unresolved.
type RemoteReader func(ctx context.Context, owner, repo, commit, p string) ([]byte, error)

// reason maps a Source error to a gap reason.
func reason(err error) string {
	switch {
	case errors.Is(err, ErrNotFound):
		return ReasonNotFound
	case errors.Is(err, ErrTruncated):
		return ReasonTruncated
	case errors.Is(err, ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrIntegrity):
		return ReasonIntegrity
	case errors.Is(err, ErrNotRegular):
		return ReasonNotRegular
	case errors.Is(err, errTooMany):
		return ReasonTooMany
	default:
		return ReasonUnreadable
	}
}

// Load reads the workflow files of src, then follows policy.References
// until nothing more can be read: local actions, local reusable
// workflows and (with remote) pinned remote reusable workflows. Every
// read that fails for another reason than absence becomes a Gap; a
// missing local reference is left to the analyzer (it reports it). A
// canceled ctx is an error.
func Load(ctx context.Context, repository, commit string, src Source, remote RemoteReader) (policy.Snapshot, error) {
	snap := policy.Snapshot{Repository: repository, Commit: commit, Files: map[string][]byte{}, Remote: map[string][]byte{}}
	gap := func(p string, err error) {
		snap.Incomplete = append(snap.Incomplete, policy.Gap{Path: p, Reason: reason(err)})
	}
	entries, err := src.List(ctx, WorkflowDir)
	switch {
	case ctx.Err() != nil:
		return snap, ctx.Err()
	case errors.Is(err, ErrNotFound):
		// No workflows: nothing to audit, and nothing licensed.
	case err != nil:
		gap(WorkflowDir, err)
	}
	for _, e := range entries {
		if e.Dir || !(strings.HasSuffix(e.Name, ".yml") || strings.HasSuffix(e.Name, ".yaml")) {
			continue
		}
		if len(snap.Files) >= MaxFiles {
			gap(WorkflowDir, errTooMany)
			break
		}
		p := path.Join(WorkflowDir, e.Name)
		b, err := src.Read(ctx, p)
		if ctx.Err() != nil {
			return snap, ctx.Err()
		}
		if err != nil {
			gap(p, err)
			continue
		}
		snap.Files[p] = b
	}
	tried := map[string]bool{}
	for round := 0; round < MaxRounds; round++ {
		needs := policy.References(snap)
		progress := false
		for _, n := range needs {
			key := string(n.Kind) + "\x00" + n.Path + "\x00" + n.Ref
			if tried[key] {
				continue
			}
			tried[key] = true
			progress = true
			if len(snap.Files)+len(snap.Remote) >= MaxFiles {
				gap(n.Path+n.Ref, errTooMany)
				continue
			}
			switch n.Kind {
			case policy.NeedLocalAction:
				for _, name := range []string{"action.yml", "action.yaml"} {
					p := path.Join(n.Path, name)
					b, err := src.Read(ctx, p)
					if err == nil {
						snap.Files[p] = b
						break
					}
					if !errors.Is(err, ErrNotFound) {
						gap(p, err)
						break
					}
				}
			case policy.NeedLocalWorkflow:
				b, err := src.Read(ctx, n.Path)
				switch {
				case err == nil:
					snap.Files[n.Path] = b
				case !errors.Is(err, ErrNotFound):
					gap(n.Path, err)
				}
			case policy.NeedRemoteWorkflow:
				if remote == nil {
					continue
				}
				b, err := remote(ctx, n.Owner, n.Repo, n.Commit, n.RemotePath)
				if err == nil {
					snap.Remote[n.Ref] = b
				}
			}
			if ctx.Err() != nil {
				return snap, ctx.Err()
			}
		}
		if !progress {
			break
		}
	}
	sort.Slice(snap.Incomplete, func(i, j int) bool { return snap.Incomplete[i].Path < snap.Incomplete[j].Path })
	return snap, nil
}

// errTooMany: the snapshot reached MaxFiles.
var errTooMany = fmt.Errorf("snapshot: more than %d files", MaxFiles)
