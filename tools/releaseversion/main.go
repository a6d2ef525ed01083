// Command releaseversion decides the next release of this repository from
// its git history (docs/packaging.md "Automated releases"): the conventional
// commits since the latest vMAJOR.MINOR.PATCH tag decide the semver bump
// (feat minor, fix and perf patch, a breaking change major; before 1.0.0 a
// breaking change bumps the minor version), nothing releasable means no
// release, and the first release is -initial.
//
// Usage (in the release workflow, from the checkout root):
//
//	go run ./tools/releaseversion -ref "$GITHUB_REF" -default-branch main \
//	    -notes "$RUNNER_TEMP/notes.md" >> "$GITHUB_OUTPUT"
//
// It prints key=value lines: release (true|false), version, previous, bump
// and alias (the moving major tag to force-update, v1 for v1.x.y; empty
// before 1.0.0), and writes the release notes to -notes. It refuses to run
// on any ref but the default branch: a release is cut from the default
// branch only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if err := run(os.Args[1:], ".", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "releaseversion:", err)
		os.Exit(1)
	}
}

func run(args []string, dir string, stdout io.Writer) error {
	fs := flag.NewFlagSet("releaseversion", flag.ContinueOnError)
	ref := fs.String("ref", "", "the ref being released (GITHUB_REF); must be the default branch")
	defaultBranch := fs.String("default-branch", "", "the repository's default branch")
	notes := fs.String("notes", "", "write the release notes to this file")
	initialFlag := fs.String("initial", "v1.0.0", "the version of the first release")
	if err := fs.Parse(args); err != nil {
		return err
	}
	initial, ok := ParseTag(*initialFlag)
	if !ok {
		return fmt.Errorf("-initial %q is not vMAJOR.MINOR.PATCH", *initialFlag)
	}
	if err := CheckRef(*ref, *defaultBranch); err != nil {
		return err
	}
	tags, commits, err := history(dir)
	if err != nil {
		return err
	}
	d := Decide(tags, commits, initial)
	if *notes != "" && d.Release {
		if err := os.WriteFile(*notes, []byte(Notes(d)), 0o644); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(stdout, "release=%t\nversion=%s\nprevious=%s\nbump=%s\nalias=%s\n", d.Release, d.Version, d.Previous, d.Bump, d.Alias)
	return err
}

// CheckRef refuses a release from anything but the default branch.
func CheckRef(ref, defaultBranch string) error {
	if defaultBranch == "" || ref == "" {
		return errors.New("-ref and -default-branch are required")
	}
	if ref != "refs/heads/"+defaultBranch {
		return fmt.Errorf("releases are cut from refs/heads/%s only, not %s", defaultBranch, ref)
	}
	return nil
}

// history reads the release tags and the commits since the latest one
// (every commit reachable from HEAD when there is none), newest first.
func history(dir string) ([]string, []Commit, error) {
	out, err := git(dir, "tag", "--list", "v*")
	if err != nil {
		return nil, nil, err
	}
	tags := strings.Fields(out)
	var latest *Version
	var latestTag string
	for _, t := range tags {
		if v, ok := ParseTag(t); ok && (latest == nil || latest.Less(v)) {
			latest, latestTag = &v, t
		}
	}
	rangeArg := "HEAD"
	if latest != nil {
		// The release commit a tag points to is not on the default branch
		// (only the tag is pushed), but its parent is: latestTag..HEAD is
		// exactly what the default branch gained since that release.
		rangeArg = latestTag + "..HEAD"
	}
	out, err = git(dir, "log", "--format=%H%x1f%B%x1e", rangeArg)
	if err != nil {
		return nil, nil, err
	}
	var commits []Commit
	for _, rec := range strings.Split(out, "\x1e") {
		sha, msg, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x1f")
		if ok {
			commits = append(commits, ParseCommit(sha, msg))
		}
	}
	return tags, commits, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
