package snapshot

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// Dir is a Source over a local checkout (the working tree as it is, for
// buildlock policy check). Only regular files are read; a symlink is
// ErrNotRegular, as GitHub does not follow symlinked workflow files.
type Dir struct {
	// Root is the checkout's root directory.
	Root string
}

// full maps a repository path into Root, refusing anything that is not a
// clean relative path and anything whose directory resolves (through
// symlinks) outside Root.
func (d Dir) full(p string) (string, error) {
	if p != "" && (path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p)) {
		return "", ErrNotFound
	}
	full := filepath.Join(d.Root, filepath.FromSlash(p))
	root, err := filepath.EvalSymlinks(d.Root)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(full))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if p != "" {
			return "", ErrNotRegular
		}
	}
	return full, nil
}

// List implements Source.
func (d Dir) List(ctx context.Context, dir string) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	full, err := d.full(dir)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		out = append(out, Entry{Name: de.Name(), Dir: de.IsDir()})
	}
	return out, nil
}

// Read implements Source.
func (d Dir) Read(ctx context.Context, p string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	full, err := d.full(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > MaxFileBytes {
		return nil, ErrTooLarge
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}

// DotGitHub reads every .yml/.yaml file under root/.github (workflows and
// action metadata, at any depth), keyed by repository-relative path, for
// policy.AuditLockRepository. What it cannot audit is returned as gaps,
// never skipped: a symbolic link anywhere under .github (a file or a
// directory; the runner follows it, so the audit would read one thing and
// the runner run another) is ReasonNotRegular, a file over MaxFileBytes is
// ReasonTooLarge, a file that cannot be read is ReasonUnreadable. More
// than MaxFiles files, or a .github that cannot be walked, is an error.
func DotGitHub(root string) (map[string][]byte, []policy.Gap, error) {
	files := map[string][]byte{}
	var gaps []policy.Gap
	base := filepath.Join(root, ".github")
	err := filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if de.Type()&fs.ModeSymlink != 0 {
			gaps = append(gaps, policy.Gap{Path: rel, Reason: ReasonNotRegular})
			return nil
		}
		if de.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			return nil
		}
		if len(files) >= MaxFiles {
			return errTooMany
		}
		b, err := Dir{Root: root}.Read(context.Background(), rel)
		if err != nil {
			gaps = append(gaps, policy.Gap{Path: rel, Reason: reason(err)})
			return nil
		}
		files[rel] = b
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return files, gaps, nil
	}
	return files, gaps, err
}
