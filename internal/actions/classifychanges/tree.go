package classifychanges

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

// git modes of a tree entry (git-ls-tree(1)).
const (
	modeSymlink   = "120000"
	modeSubmodule = "160000"
)

// TreeArgs lists every entry of commit's tree, recursively, NUL-terminated:
// "<mode> SP <type> SP <object> TAB <path> NUL".
func TreeArgs(commit string) []string {
	return []string{"--no-replace-objects", "ls-tree", "-r", "-z", "--full-tree", commit}
}

// BlobArgs reads objects named on stdin: "<object> SP <type> SP <size> LF
// <content> LF" each, or "<object> SP missing LF".
func BlobArgs() []string { return []string{"--no-replace-objects", "cat-file", "--batch"} }

// Tree reads what the visibility check needs of commit (the pull
// request's head): every symbolic link with its target, and
// Packages/manifest.json. It runs git twice, in the same sanitized
// environment and time bound as the diff: ls-tree streamed (only links and
// the manifest are kept, so a large tree costs time, not memory) and one
// cat-file --batch for the link targets and the manifest. Something the
// check cannot read as it should (a target or manifest over its bound, a
// missing object) is recorded in the Tree, so Visible is unsure and Unity
// is required; a failing git is an error.
func (g Git) Tree(ctx context.Context, commit string) (changes.Tree, error) {
	var t changes.Tree
	if !filepath.IsAbs(g.Path) {
		return t, fmt.Errorf("git path %q is not absolute", g.Path)
	}
	ctx, cancel := context.WithTimeout(ctx, DiffTimeout)
	defer cancel()
	links := map[string]string{} // path → object
	var manifestObject string
	err := g.stream(ctx, TreeArgs(commit), nil, func(r *bufio.Reader) error {
		for {
			entry, err := r.ReadBytes(0)
			if errors.Is(err, io.EOF) && len(entry) == 0 {
				return nil
			}
			if err != nil {
				return fmt.Errorf("git ls-tree printed a malformed entry: %w", err)
			}
			meta, p, ok := bytes.Cut(entry[:len(entry)-1], []byte{'\t'})
			fields := strings.Fields(string(meta))
			if !ok || len(fields) != 3 || len(p) == 0 {
				return errors.New("git ls-tree printed a malformed entry")
			}
			mode, object, path := fields[0], fields[2], string(p)
			switch {
			case path == changes.ManifestPath && mode == modeSymlink:
				t.ManifestUnusual = "is a symbolic link"
			case path == changes.ManifestPath && mode == modeSubmodule:
				t.ManifestUnusual = "is a submodule"
			case path == changes.ManifestPath:
				manifestObject = object
			case strings.HasPrefix(path, changes.ManifestPath+"/"):
				t.ManifestUnusual = "is a directory"
			}
			if mode == modeSymlink && len(links) <= changes.MaxLinks {
				links[path] = object
			}
		}
	})
	if err != nil {
		return t, err
	}
	if len(links) > changes.MaxLinks {
		t.Links = map[string]string{}
		for p := range links {
			t.Links[p] = ""
		}
		return t, nil
	}
	var want []string
	seen := map[string]bool{}
	for _, o := range links {
		if !seen[o] {
			seen[o] = true
			want = append(want, o)
		}
	}
	if manifestObject != "" && !seen[manifestObject] {
		want = append(want, manifestObject)
	}
	blobs := map[string][]byte{}
	problems := map[string]string{}
	if len(want) > 0 {
		stdin := strings.Join(want, "\n") + "\n"
		err = g.stream(ctx, BlobArgs(), strings.NewReader(stdin), func(r *bufio.Reader) error {
			for range want {
				header, err := r.ReadString('\n')
				if err != nil {
					return fmt.Errorf("git cat-file printed a malformed header: %w", err)
				}
				f := strings.Fields(header)
				if len(f) == 2 && f[1] == "missing" {
					problems[f[0]] = "is missing from the repository"
					continue
				}
				if len(f) != 3 {
					return errors.New("git cat-file printed a malformed header")
				}
				size, err := strconv.ParseInt(f[2], 10, 64)
				if err != nil || size < 0 {
					return errors.New("git cat-file printed a malformed size")
				}
				limit := int64(changes.MaxLinkTarget)
				if f[0] == manifestObject {
					limit = changes.MaxManifestBytes
				}
				if f[1] != "blob" || size > limit {
					if _, err := io.CopyN(io.Discard, r, size+1); err != nil {
						return fmt.Errorf("git cat-file: %w", err)
					}
					problems[f[0]] = fmt.Sprintf("is a %s of %d bytes, over the %d the check reads", f[1], size, limit)
					continue
				}
				b := make([]byte, size+1)
				if _, err := io.ReadFull(r, b); err != nil {
					return fmt.Errorf("git cat-file: %w", err)
				}
				blobs[f[0]] = b[:size]
			}
			return nil
		})
		if err != nil {
			return t, err
		}
	}
	t.Links = map[string]string{}
	for p, o := range links {
		if why, bad := problems[o]; bad {
			t.Problem = fmt.Sprintf("the symbolic link %s %s", changes.DisplayPath(p), why)
			continue
		}
		t.Links[p] = string(blobs[o])
	}
	if manifestObject != "" {
		if why, bad := problems[manifestObject]; bad {
			t.ManifestUnusual = why
		} else {
			t.Manifest = blobs[manifestObject]
			if t.Manifest == nil {
				t.Manifest = []byte{}
			}
		}
	}
	return t, nil
}

// stream runs git with args, feeds stdin, and hands its stdout to read; a
// non-zero exit, a read error or the time limit is an error naming git's
// (bounded) stderr.
func (g Git) stream(ctx context.Context, args []string, stdin io.Reader, read func(*bufio.Reader) error) error {
	cmd := exec.CommandContext(ctx, g.Path, args...)
	cmd.Dir = g.Dir
	cmd.Env = GitEnv()
	cmd.Stdin = stdin
	var stderr boundedBuffer
	stderr.limit = maxStderr
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start git: %w", err)
	}
	readErr := read(bufio.NewReaderSize(stdout, 64<<10))
	if readErr != nil {
		_ = cmd.Process.Kill()
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("git %s did not finish within %s: %w", args[1], DiffTimeout, ctx.Err())
	case readErr != nil:
		return readErr
	case waitErr != nil:
		return fmt.Errorf("git %s failed (%v): %s", args[1], waitErr, oneLine(stderr.String()))
	}
	return nil
}
