package check

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

// What `policy check PATH` accepts, decided in this order:
//
//   - a repository root (a directory holding .github/workflows): every
//     workflow there, findings named by repository path;
//   - a .github/workflows directory: the same, for the repository above it;
//   - a single .yml/.yaml file: that file as a workflow;
//   - any other directory holding .yml/.yaml files (docs/examples): each of
//     them as a workflow.
//
// For a file or a folder of files, local references (uses: ./...) resolve
// against the repository the path is in (the nearest parent holding .git),
// as the runner resolves them against the checkout, and findings name the
// file by the path given.

// target is what one PATH argument resolves to.
type target struct {
	// root is the repository root local uses: resolve against.
	root string
	// files maps snapshot paths (.github/workflows/<name>) to the files
	// read in their place, by the path the user gave (nil: the repository's
	// own .github/workflows).
	files map[string]string
}

// errNothing: the path holds no workflow file.
var errNothing = errors.New("0 workflows checked")

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// repositoryRoot is the nearest directory at or above dir holding .git (a
// directory, or the file of a worktree), or dir itself.
func repositoryRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// resolveTarget decides what arg names (see the package comment of this
// file). A path that does not exist is an error; one that holds no
// workflow file is errNothing.
func resolveTarget(arg string) (target, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return target{}, err
	}
	if !fi.IsDir() {
		if !isYAML(arg) {
			return target{}, errors.New("not a .yml or .yaml file")
		}
		name := filepath.Base(arg)
		return target{root: repositoryRoot(filepath.Dir(arg)), files: map[string]string{snapshot.WorkflowDir + "/" + name: arg}}, nil
	}
	if isDir(filepath.Join(arg, filepath.FromSlash(snapshot.WorkflowDir))) {
		return target{root: arg}, nil
	}
	clean := filepath.Clean(arg)
	if abs, err := filepath.Abs(clean); err == nil && filepath.Base(abs) == "workflows" && filepath.Base(filepath.Dir(abs)) == ".github" {
		return target{root: filepath.Dir(filepath.Dir(abs))}, nil
	}
	des, err := os.ReadDir(arg)
	if err != nil {
		return target{}, err
	}
	t := target{root: repositoryRoot(arg), files: map[string]string{}}
	for _, de := range des {
		if de.IsDir() || !isYAML(de.Name()) {
			continue
		}
		t.files[snapshot.WorkflowDir+"/"+de.Name()] = filepath.Join(arg, de.Name())
	}
	if len(t.files) == 0 {
		return target{}, errNothing
	}
	return t, nil
}

// display is the path a finding is printed with: the file as the user
// named it when it was read in a workflow's place.
func (t target) display(p string) string {
	if real, ok := t.files[p]; ok {
		return filepath.ToSlash(real)
	}
	return p
}

// overlay is a snapshot.Source over the repository at root in which
// .github/workflows holds exactly the given files.
type overlay struct {
	repo  snapshot.Dir
	files map[string]string
}

// List implements snapshot.Source.
func (o overlay) List(ctx context.Context, dir string) ([]snapshot.Entry, error) {
	if dir != snapshot.WorkflowDir {
		return o.repo.List(ctx, dir)
	}
	var out []snapshot.Entry
	for p := range o.files {
		out = append(out, snapshot.Entry{Name: path.Base(p)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Read implements snapshot.Source: a given file is read with the same
// rules as the checkout's (a regular file of at most MaxFileBytes).
func (o overlay) Read(ctx context.Context, p string) ([]byte, error) {
	real, ok := o.files[p]
	if !ok {
		return o.repo.Read(ctx, p)
	}
	b, err := snapshot.Dir{Root: filepath.Dir(real)}.Read(ctx, filepath.Base(real))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, snapshot.ErrNotFound
	}
	return b, err
}

// source is the snapshot.Source of the target.
func (t target) source() snapshot.Source {
	if t.files == nil {
		return snapshot.Dir{Root: t.root}
	}
	return overlay{repo: snapshot.Dir{Root: t.root}, files: t.files}
}
