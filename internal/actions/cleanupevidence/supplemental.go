package cleanupevidence

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
)

// supplemental is what was read of the supplemental evidence.
type supplemental struct {
	// raw and texts are the files read, in read order: exactly what the
	// evidence digest covers and the markers are searched in.
	raw   [][]byte
	texts []string
	// problems lists why the set is incomplete (empty = complete), in the
	// order they were met.
	problems []string
}

// complete reports whether every supplemental path was read in full.
func (s supplemental) complete() bool { return len(s.problems) == 0 }

// summary names the first problem and how many more there were.
func (s supplemental) summary() string {
	switch len(s.problems) {
	case 0:
		return ""
	case 1:
		return s.problems[0]
	}
	return fmt.Sprintf("%s; and %d more problem(s)", s.problems[0], len(s.problems)-1)
}

type collector struct {
	out       supplemental
	workspace string
	seen      map[[2]uint64]bool
	total     int64
	files     int
	entries   int
	// walkStopped: the entry limit was reached, no directory is walked
	// further. filesStopped: the file bound was reached, nothing more is
	// read.
	walkStopped, filesStopped bool
}

// collectSupplemental reads every supplemental path (facts §3): files and
// directories (visited depth-first in sorted order; a walk reads .log and
// .txt files only, with the extension as Node.js's path.extname sees it,
// while a file named directly is read whatever its name), deduplicated by
// identity (the return log counts), within the bounds. A relative path is
// read from workspace, the step's working directory, as the reference's
// file reads resolve it.
//
// A problem with one path or file (missing, a link, not a regular file or
// directory, over the per-file or total size bound, unreadable, not strict
// UTF-8) makes the set incomplete, skips that file, and collection goes on:
// a 20111 in a later file is still found. Reaching the entry limit stops
// the directory walks and the file bound stops all reading; both make the
// set incomplete. Nothing here fails the step and nothing is deleted.
func collectSupplemental(paths []string, returnLog fileid.Identity, workspace string) supplemental {
	c := &collector{seen: map[[2]uint64]bool{{returnLog.Dev, returnLog.Ino}: true}, total: returnLog.Size, files: 1, workspace: workspace}
	for _, p := range paths {
		if c.filesStopped {
			break
		}
		c.path(p)
	}
	return c.out
}

func (c *collector) fail(problem string) { c.out.problems = append(c.out.problems, problem) }

func (c *collector) path(p string) {
	if !filepath.IsAbs(p) {
		if c.workspace == "" || !filepath.IsAbs(c.workspace) {
			c.fail(fmt.Sprintf("supplemental path %s is relative and GITHUB_WORKSPACE is not an absolute path to resolve it from", p))
			return
		}
		p = filepath.Join(c.workspace, p)
	}
	p = filepath.Clean(p)
	if err := fileid.CheckAncestry(p); err != nil {
		c.fail(fmt.Sprintf("supplemental path %s: %v", p, err))
		return
	}
	id, err := fileid.Lstat(p)
	switch {
	case err != nil:
		c.fail(fmt.Sprintf("supplemental path %s: %v", p, err))
	case id.Dir:
		c.dir(p)
	case id.Regular:
		c.file(p, id)
	default:
		c.fail(fmt.Sprintf("supplemental path %s is not a regular file or directory", p))
	}
}

func (c *collector) dir(p string) {
	if c.walkStopped {
		c.fail(fmt.Sprintf("supplemental directory %s was not walked: the entry limit was reached", p))
		return
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		c.fail(fmt.Sprintf("supplemental directory %s: %v", p, err))
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if c.walkStopped || c.filesStopped {
			return
		}
		c.entries++
		if evidence.EntryLimitReached(c.entries) {
			c.walkStopped = true
			c.fail(fmt.Sprintf("the supplemental directory walk reached %d directory entries", evidence.MaxEntries))
			return
		}
		child := filepath.Join(p, e.Name())
		id, err := fileid.Lstat(child)
		switch {
		case err != nil:
			c.fail(fmt.Sprintf("supplemental entry %s: %v", child, err))
		case id.Dir:
			c.dir(child)
		case id.Regular:
			if evidence.WalkReads(e.Name()) {
				c.file(child, id)
			}
		case e.Type()&os.ModeSymlink != 0:
			c.fail(fmt.Sprintf("supplemental entry %s is a symbolic link", child))
		default:
			c.fail(fmt.Sprintf("supplemental entry %s is not a regular file or directory", child))
		}
	}
}

func (c *collector) file(p string, id fileid.Identity) {
	key := [2]uint64{id.Dev, id.Ino}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.files++
	if c.files > evidence.MaxFiles {
		c.filesStopped = true
		c.fail(fmt.Sprintf("more than %d evidence files", evidence.MaxFiles))
		return
	}
	if id.Size > evidence.MaxFileBytes || c.total+id.Size > evidence.MaxTotalBytes {
		c.fail(fmt.Sprintf("supplemental file %s was not read: it is over the 25 MiB per-file or total bound", p))
		return
	}
	// Shared: a supplemental log may still be held open by its writer
	// (Windows share modes); the identity re-check notices a change.
	b, err := readBounded(p, id, evidence.MaxFileBytes, fileid.OpenFileShared)
	if err != nil {
		c.fail(fmt.Sprintf("supplemental file %s: %v", p, err))
		return
	}
	text, err := evidence.DecodeText(b)
	if err != nil {
		c.fail(fmt.Sprintf("supplemental file %s: %v", p, err))
		return
	}
	c.total += int64(len(b))
	c.out.raw = append(c.out.raw, b)
	c.out.texts = append(c.out.texts, text)
}
