package cleanupevidence

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
)

// supplemental is what was read of the supplemental evidence.
type supplemental struct {
	raw   [][]byte
	texts []string
	// problem is the first reason the set is incomplete ("" = complete).
	problem string
}

type collector struct {
	out     supplemental
	seen    map[[2]uint64]bool
	total   int64
	files   int
	entries int
}

// collectSupplemental reads every supplemental path (facts §3): files and
// directories (visited depth-first in sorted order), .log and .txt only,
// deduplicated by identity (the return log counts), within the bounds. A
// problem stops the collection and makes it incomplete; nothing here ever
// fails the step, and nothing is deleted.
func collectSupplemental(paths []string, returnLog fileid.Identity) supplemental {
	c := &collector{seen: map[[2]uint64]bool{{returnLog.Dev, returnLog.Ino}: true}, total: returnLog.Size, files: 1}
	for _, p := range paths {
		if c.out.problem != "" {
			break
		}
		if !filepath.IsAbs(p) {
			c.fail("a supplemental path is not absolute")
			break
		}
		p = filepath.Clean(p)
		if err := fileid.CheckAncestry(p); err != nil {
			c.fail(fmt.Sprintf("supplemental path %s: %v", p, err))
			break
		}
		id, err := fileid.Lstat(p)
		switch {
		case err != nil:
			c.fail(fmt.Sprintf("supplemental path %s: %v", p, err))
		case id.Dir:
			c.dir(p)
		case id.Regular:
			if !evidenceExt(p) {
				c.fail(fmt.Sprintf("supplemental file %s is not a .log or .txt file", p))
			} else {
				c.file(p, id)
			}
		default:
			c.fail(fmt.Sprintf("supplemental path %s is not a regular file or directory", p))
		}
	}
	return c.out
}

func evidenceExt(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".log", ".txt":
		return true
	}
	return false
}

func (c *collector) fail(problem string) {
	if c.out.problem == "" {
		c.out.problem = problem
	}
}

func (c *collector) dir(p string) {
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		c.fail(fmt.Sprintf("supplemental directory %s: %v", p, err))
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if c.out.problem != "" {
			return
		}
		c.entries++
		if c.entries > evidence.MaxEntries {
			c.fail(fmt.Sprintf("more than %d directory entries under the supplemental paths", evidence.MaxEntries))
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
			if evidenceExt(child) {
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
		c.fail(fmt.Sprintf("more than %d evidence files", evidence.MaxFiles))
		return
	}
	if id.Size > evidence.MaxFileBytes || c.total+id.Size > evidence.MaxTotalBytes {
		c.fail(fmt.Sprintf("supplemental file %s is over the 25 MiB per-file or total bound", p))
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
