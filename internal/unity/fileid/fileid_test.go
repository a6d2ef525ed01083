package fileid_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
)

func code(err error) string {
	var e *fileid.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCheckAncestryRefusesASymlinkAnywhere(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("creating symlinks needs a privilege on Windows")
	}
	root := t.TempDir()
	real := filepath.Join(root, "real", "a")
	require.NoError(t, os.MkdirAll(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(real, "f"), filepath.Join(real, "flink")))

	assert.NoError(t, fileid.CheckAncestry(filepath.Join(real, "f")))
	err := fileid.CheckAncestry(filepath.Join(root, "link", "a", "f"))
	assert.Equal(t, fileid.CodeLinkInPath, code(err), "%v", err)
	assert.Contains(t, err.Error(), filepath.Join(root, "link"))
	assert.Equal(t, fileid.CodeLinkInPath, code(fileid.CheckAncestry(filepath.Join(real, "flink"))), "the last component counts")
	assert.True(t, fileid.IsNotExist(fileid.CheckAncestry(filepath.Join(real, "missing"))))
	assert.Equal(t, fileid.CodeUnsupportedPath, code(fileid.CheckAncestry("relative/path")))
}

func TestOpenFileRefusesLinksAndNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	h, err := fileid.OpenFile(f)
	require.NoError(t, err)
	h.Close()
	_, err = fileid.OpenFile(dir)
	assert.Error(t, err)
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(f, filepath.Join(dir, "l")))
		_, err = fileid.OpenFile(filepath.Join(dir, "l"))
		assert.Equal(t, fileid.CodeLinkInPath, code(err))
	}
}

func TestDeleteByIdentity(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(dir, 0o700))
	f := filepath.Join(dir, "return-license.log")
	require.NoError(t, os.WriteFile(f, []byte("evidence"), 0o600))
	id, err := fileid.Lstat(f)
	require.NoError(t, err)
	assert.True(t, id.Regular)
	assert.Equal(t, uint64(1), id.Nlink)
	dirID, err := fileid.Lstat(dir)
	require.NoError(t, err)
	assert.True(t, dirID.Dir)

	// A verifier that refuses keeps the file.
	refused := errors.New("digest mismatch")
	assert.ErrorIs(t, fileid.DeleteFile(f, id, func(*os.File) error { return refused }), refused)
	require.FileExists(t, f)

	// A changed file is not deleted.
	stale := id
	stale.Size++
	assert.Equal(t, fileid.CodeIdentityChanged, code(fileid.DeleteFile(f, stale, nil)))
	require.FileExists(t, f)

	// The verifier reads through the handle that is deleted.
	var seen string
	require.NoError(t, fileid.DeleteFile(f, id, func(h *os.File) error {
		b, err := io.ReadAll(h)
		seen = string(b)
		return err
	}))
	assert.Equal(t, "evidence", seen)
	assert.NoFileExists(t, f)

	// A different directory at the same path is not removed.
	other := dirID
	other.Ino++
	assert.Equal(t, fileid.CodeIdentityChanged, code(fileid.RemoveDir(dir, other)))
	require.NoError(t, fileid.RemoveDir(dir, dirID))
	assert.NoDirExists(t, dir)
}

func TestDeleteFileRefusesAReplacedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "x.log")
	require.NoError(t, os.WriteFile(f, []byte("a"), 0o600))
	id, err := fileid.Lstat(f)
	require.NoError(t, err)
	// Another file renamed over the name (both exist at once, so it is a
	// different object).
	repl := filepath.Join(dir, "y.log")
	require.NoError(t, os.WriteFile(repl, []byte("a"), 0o600))
	require.NoError(t, os.Rename(repl, f))
	assert.Equal(t, fileid.CodeIdentityChanged, code(fileid.DeleteFile(f, id, nil)))
	assert.FileExists(t, f)
}
