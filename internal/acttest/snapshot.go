package acttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Snapshot copies the files git would check out of the work tree src
// (tracked, plus untracked files that are not ignored, as they are now on
// disk) into dst, keeping a file only when keep(rel) is true (nil keeps
// everything). It is how a test makes a clean checkout of this repository
// for act to map an action to, or a fixture repository to run a workflow
// in: build outputs, node_modules and .git stay behind.
func Snapshot(ctx context.Context, src, dst string, keep func(rel string) bool) error {
	cmd := exec.CommandContext(ctx, "git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("acttest: git ls-files in %s: %w: %s", src, err, strings.TrimSpace(stderr.String()))
	}
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || (keep != nil && !keep(rel)) {
			continue
		}
		from := filepath.Join(src, filepath.FromSlash(rel))
		fi, err := os.Lstat(from)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := copyFile(from, to, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
