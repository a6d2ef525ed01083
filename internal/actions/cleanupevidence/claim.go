package cleanupevidence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
)

// claimed is an evidence directory this run took over.
type claimed struct {
	runnerTemp   string
	tempID       fileid.Identity
	dir, log     string
	dirID, logID fileid.Identity
}

func samePath(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// claim validates the return log's path and identity and renames its
// directory to a private name. s is valid (LoadSettings checked
// RUNNER_TEMP and the run number).
func claim(s Settings, logPath string) (*claimed, error) {
	temp, runID, attempt := s.RunnerTemp, s.RunID, s.Attempt
	badPath := refuse(CodeReturnLogPath, nil, fmt.Sprintf("return-log-path is not this run's evidence path <RUNNER_TEMP>/%s<suffix>/%s", evidence.DirName(runID, attempt, ""), evidence.LogFileName))
	if !filepath.IsAbs(logPath) || filepath.Clean(logPath) != logPath || filepath.Base(logPath) != evidence.LogFileName {
		return nil, badPath
	}
	dir := filepath.Dir(logPath)
	if !samePath(filepath.Dir(dir), temp) {
		return nil, badPath
	}
	if _, ok := evidence.ParseDirName(filepath.Base(dir), runID, attempt); !ok {
		return nil, badPath
	}
	if err := fileid.CheckAncestry(logPath); err != nil {
		if fileid.IsNotExist(err) {
			return nil, refuse(CodeReturnLogMissing, nil, fmt.Sprintf("there is no return log at %s: the return step did not write its evidence (it failed before the editor ran, or it is the reference's, which writes none when its capture is incomplete)", logPath))
		}
		return nil, refuse(CodeReturnLogUnreadable, err, "return log "+logPath)
	}
	c := &claimed{runnerTemp: temp}
	var err error
	if c.tempID, err = fileid.Lstat(temp); err != nil {
		return nil, refuse(CodeRunnerEnvironment, err, "RUNNER_TEMP")
	}
	if c.dirID, err = fileid.Lstat(dir); err != nil {
		return nil, refuse(CodeReturnLogUnreadable, err, "evidence directory")
	}
	if c.logID, err = fileid.Lstat(logPath); err != nil {
		return nil, refuse(CodeReturnLogUnreadable, err, "return log")
	}
	if !c.logID.Regular || c.logID.Nlink != 1 {
		return nil, refuse(CodeReturnLogUnreadable, nil, fmt.Sprintf("return log %s must be a regular file with exactly one link", logPath))
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, refuse(CodeClaimFailed, err, "claim nonce")
	}
	c.dir = filepath.Join(temp, evidence.ClaimedName(filepath.Base(dir), nonce))
	c.log = filepath.Join(c.dir, evidence.LogFileName)
	if err := os.Rename(dir, c.dir); err != nil {
		return nil, refuse(CodeClaimFailed, err, "claim the evidence directory")
	}
	got, err := fileid.Lstat(c.dir)
	if err != nil {
		return nil, refuse(CodeClaimFailed, err, "claimed evidence directory")
	}
	if !got.Dir || !got.SameObject(c.dirID) {
		return nil, refuse(CodeClaimFailed, nil, "the claimed evidence directory is not the one that was checked")
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, refuse(CodeClaimFailed, err, "claimed evidence directory")
	}
	if len(entries) != 1 || entries[0].Name() != evidence.LogFileName {
		return nil, refuse(CodeClaimFailed, nil, fmt.Sprintf("the claimed evidence directory must hold exactly %s, it holds %d entries", evidence.LogFileName, len(entries)))
	}
	return c, nil
}

// readLog reads the claimed return log with the bounds and identity checks.
func (c *claimed) readLog() ([]byte, string, error) {
	b, err := readBounded(c.log, c.logID, evidence.MaxFileBytes, fileid.OpenFile)
	if err != nil {
		return nil, "", refuse(CodeReturnLogUnreadable, err, "return log is unreadable")
	}
	text, err := evidence.DecodeText(b)
	if err != nil {
		return nil, "", refuse(CodeReturnLogUnreadable, err, "return log is unreadable")
	}
	return b, text, nil
}

// readBounded opens path with open (no link followed), checks it is the object
// want describes, unchanged, and at most limit bytes, reads it, and checks
// it did not change while being read.
func readBounded(path string, want fileid.Identity, limit int64, open func(string) (*os.File, error)) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	before, err := fileid.Stat(f)
	if err != nil {
		return nil, err
	}
	if !before.Unchanged(want) {
		return nil, errors.New("the file changed between its check and its open")
	}
	if before.Size > limit {
		return nil, fmt.Errorf("the file exceeds %d bytes", limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	after, err := fileid.Stat(f)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != before.Size || !after.Unchanged(before) {
		return nil, errors.New("the file changed while it was read")
	}
	return b, nil
}

// deleteEvidence deletes the claimed log by identity (re-verifying its
// content through the deleting handle), then the empty directory, and
// re-checks RUNNER_TEMP.
func (c *claimed) deleteEvidence(classified []byte) error {
	verify := func(f *os.File) error {
		b, err := io.ReadAll(io.LimitReader(f, int64(len(classified))+1))
		if err != nil {
			return err
		}
		if !bytes.Equal(b, classified) {
			return errors.New("the return log changed after it was classified")
		}
		return nil
	}
	if err := fileid.DeleteFile(c.log, c.logID, verify); err != nil {
		return err
	}
	if err := fileid.RemoveDir(c.dir, c.dirID); err != nil {
		return err
	}
	got, err := fileid.Lstat(c.runnerTemp)
	if err != nil {
		return err
	}
	if !got.Dir || !got.SameObject(c.tempID) {
		return errors.New("RUNNER_TEMP is no longer the directory the evidence was claimed in")
	}
	return nil
}
