// Package lockinit is `buildlock init`: it writes what a lock repository
// needs that only its operator can decide (the lock config with its seat
// count, the caller policy pinning the owner's id), checks that the
// reaper and recover workflows the repository already carries are in
// place, and says which steps remain by hand (the two Apps, their
// secrets, the repository variable, the branch rules) with the doctor
// command that checks them. It never overwrites a file that differs
// without Force.
package lockinit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The recommended settings of a new lock (docs/adopting.md). Every one is
// what the README's consumer workflow needs or what keeps a license safe.
const (
	// RecommendedCooldownSeconds keeps a returned seat out of use for six
	// minutes, the reference's default: Unity's licensing server frees a
	// returned activation a few minutes after the return (the ~5 minute
	// activation handoff), so an immediate next activation could still
	// count as one more machine.
	RecommendedCooldownSeconds = lockstate.DefaultReleaseCooldownSeconds
	// RecommendedMaxOvertakes is the default fairness bound at schema 6:
	// a waiter on a busy runner is passed at most twice.
	RecommendedMaxOvertakes = lockstate.DefaultMaxOvertakes
)

// Paths of the files init writes or checks, relative to the repository root.
const (
	PolicyPath          = "locks/policy.json"
	ReaperWorkflowPath  = ".github/workflows/reap-stale-locks.yml"
	RecoverWorkflowPath = ".github/workflows/recover-build-lock.yml"
)

// Options of one init.
type Options struct {
	// Lock is the lock name (lockaction.ValidateLockName).
	Lock string
	// Seats is maxHolders, 1..lockstate.MaxHoldersCap.
	Seats int
	// OwnerID, when positive, pins the lock repository owner's numeric id
	// in locks/policy.json.
	OwnerID int64
	// Repository is OWNER/NAME of the lock repository, for the printed
	// commands ("" prints placeholders).
	Repository string
	// Force overwrites files whose content differs.
	Force bool
}

// Validate reports every invalid option at once.
func (o Options) Validate() error {
	var errs []error
	if err := lockaction.ValidateLockName(o.Lock); err != nil {
		errs = append(errs, fmt.Errorf("--lock: %w", err))
	}
	if o.Seats < 1 || o.Seats > lockstate.MaxHoldersCap {
		errs = append(errs, fmt.Errorf("--seats must be 1..%d, got %d", lockstate.MaxHoldersCap, o.Seats))
	}
	if o.OwnerID < 0 {
		errs = append(errs, fmt.Errorf("--owner-id must be the owner's positive numeric id, got %d", o.OwnerID))
	}
	if o.Repository != "" {
		owner, name, ok := strings.Cut(o.Repository, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, fmt.Errorf("--repository must be OWNER/NAME, got %q", o.Repository))
		}
	}
	return errors.Join(errs...)
}

// RecommendedConfig is the lock config init writes for seats: every
// protection on (schema 6: runner serialization, resource lifecycle,
// account health, fencing tokens and bounded overtaking), because the
// README's consumer workflow relies on them (require-resource-lifecycle,
// fencing-token) and a brand-new lock starts at that schema in its first
// write, with nothing to drain.
func RecommendedConfig(seats int) lockstate.Config {
	return lockstate.Config{
		MaxHolders: seats, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true,
		ReleaseCooldownSeconds: RecommendedCooldownSeconds, MaxOvertakes: RecommendedMaxOvertakes,
	}
}

// ConfigJSON is the file RecommendedConfig(seats) is written as: two-space
// JSON, keys in the order locks/README.md documents them, a final newline.
// locks/example.config.json is ConfigJSON(2) byte for byte (a test holds
// them together, and docs/adopting.md shows the same).
func ConfigJSON(seats int) []byte {
	c := RecommendedConfig(seats)
	return fmt.Appendf(nil, `{
  "maxHolders": %d,
  "runnerSerialization": %t,
  "resourceLifecycle": %t,
  "accountHealth": %t,
  "fencedAdmission": %t,
  "releaseCooldownSeconds": %d,
  "maxOvertakes": %d
}
`, c.MaxHolders, c.RunnerSerialization, c.ResourceLifecycle, c.AccountHealth, c.FencedAdmission, c.ReleaseCooldownSeconds, c.MaxOvertakes)
}

// PolicyJSON is locks/policy.json pinning ownerID.
func PolicyJSON(ownerID int64) []byte {
	return fmt.Appendf(nil, "{\n  \"ownerId\": %d\n}\n", ownerID)
}

// ConfigPath is the config file of lock.
func ConfigPath(lock string) string { return "locks/" + lock + ".config.json" }

// File is one file init writes.
type File struct {
	Path    string
	Content []byte
}

// Plan returns the files o writes.
func Plan(o Options) ([]File, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	files := []File{{Path: ConfigPath(o.Lock), Content: ConfigJSON(o.Seats)}}
	if o.OwnerID > 0 {
		files = append(files, File{Path: PolicyPath, Content: PolicyJSON(o.OwnerID)})
	}
	return files, nil
}

// Status is what Apply did with one file.
type Status string

// Statuses.
const (
	Created     Status = "created"
	Unchanged   Status = "unchanged"
	Overwritten Status = "overwritten"
)

// ErrExists is returned (wrapped, with the paths) when a file to write
// exists with other content and Force is off. Nothing was written.
var ErrExists = errors.New("files exist with other content")

// Apply writes files under dir. It first checks every file: one that exists
// with other content makes it write nothing and return ErrExists naming
// them all, unless force. It returns each file's status in order.
func Apply(dir string, files []File, force bool) ([]Status, error) {
	status := make([]Status, len(files))
	var differ []string
	for i, f := range files {
		old, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			status[i] = Created
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		case bytes.Equal(old, f.Content):
			status[i] = Unchanged
		default:
			status[i] = Overwritten
			differ = append(differ, f.Path)
		}
	}
	if len(differ) > 0 && !force {
		return nil, fmt.Errorf("%w: %s (compare them with what init writes, then run again with --force to replace them)", ErrExists, strings.Join(differ, ", "))
	}
	for i, f := range files {
		if status[i] == Unchanged {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return nil, err
		}
	}
	return status, nil
}

// CheckWorkflows checks that dir is a copy of the build lock repository
// with its reaper and recover workflows: they run the repository's own
// actions (uses: ./.github/actions/...), so a lock repository is always a
// fork or mirror of this one, never an empty repository with files added.
func CheckWorkflows(dir string) error {
	var errs []error
	for _, w := range []struct{ path, action string }{
		{ReaperWorkflowPath, "./.github/actions/reap-stale-locks"},
		{RecoverWorkflowPath, "./.github/actions/recover-build-lock"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(w.path)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s is missing: run init in a fork or mirror of the build lock repository (docs/adopting.md step 1), whose workflows run its own actions", w.path))
			continue
		}
		if !bytes.Contains(data, []byte("uses: "+w.action)) {
			errs = append(errs, fmt.Errorf("%s does not run %s: restore it from the build lock repository", w.path, w.action))
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(w.action, "./")), "action.yml")); err != nil {
			errs = append(errs, fmt.Errorf("%s/action.yml is missing: run init in a fork or mirror of the build lock repository", strings.TrimPrefix(w.action, "./")))
		}
	}
	return errors.Join(errs...)
}
