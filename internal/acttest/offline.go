package acttest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rhysd/actionlint"
)

// Uses is one remote `uses:` of a workflow step: OWNER/REPO[/PATH]@REF.
type Uses struct {
	Owner, Repo, Path, Ref string
}

// Key is the OWNER/REPO@REF form act's --local-repository matches (the path
// inside the repository does not take part: act maps the whole repository).
func (u Uses) Key() string { return u.Owner + "/" + u.Repo + "@" + u.Ref }

// String is the uses: value.
func (u Uses) String() string {
	s := u.Owner + "/" + u.Repo
	if u.Path != "" {
		s += "/" + u.Path
	}
	return s + "@" + u.Ref
}

var (
	namePart = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	refPart  = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
)

// ParseUses decodes a remote uses: value (OWNER/REPO[/PATH]@REF). A local
// action (./...), a docker:// image or anything else is not remote: ok is
// false.
func ParseUses(s string) (Uses, bool) {
	spec, ref, ok := strings.Cut(s, "@")
	if !ok || ref == "" || !refPart.MatchString(ref) || strings.HasPrefix(s, "./") || strings.Contains(spec, "://") {
		return Uses{}, false
	}
	parts := strings.Split(spec, "/")
	if len(parts) < 2 {
		return Uses{}, false
	}
	for _, p := range parts {
		if !namePart.MatchString(p) || p == "." || p == ".." {
			return Uses{}, false
		}
	}
	return Uses{Owner: parts[0], Repo: parts[1], Path: strings.Join(parts[2:], "/"), Ref: ref}, true
}

// OfflineError is CheckOffline's refusal: each problem names the workflow
// line and what to do.
type OfflineError struct {
	Problems []string
}

func (e *OfflineError) Error() string {
	return "acttest: the workflow cannot run offline under act:\n  " + strings.Join(e.Problems, "\n  ")
}

// RemoteUses returns every remote action and reusable workflow the
// workflow references, in file order.
func RemoteUses(workflow []byte) ([]Uses, error) {
	w, errs := actionlint.Parse(workflow)
	if len(errs) > 0 {
		return nil, fmt.Errorf("acttest: parse workflow: %s", errs[0].Error())
	}
	var out []Uses
	for _, j := range sortedJobs(w) {
		if j.WorkflowCall != nil && j.WorkflowCall.Uses != nil {
			if u, ok := ParseUses(j.WorkflowCall.Uses.Value); ok {
				out = append(out, u)
			}
		}
		for _, st := range j.Steps {
			if ea, ok := st.Exec.(*actionlint.ExecAction); ok && ea.Uses != nil {
				if u, ok := ParseUses(ea.Uses.Value); ok {
					out = append(out, u)
				}
			}
		}
	}
	return out, nil
}

// CheckOffline refuses a workflow that would make act reach the network:
// a remote action or reusable workflow without a local mapping (keys are
// OWNER/REPO@REF, as act's --local-repository), or a docker:// action (no
// Docker engine here). It is pure: the workflow bytes and the mapping in,
// a list of problems out.
func CheckOffline(workflow []byte, mapped map[string]string) error {
	w, errs := actionlint.Parse(workflow)
	if len(errs) > 0 {
		return fmt.Errorf("acttest: parse workflow: %s", errs[0].Error())
	}
	var problems []string
	check := func(where string, line int, uses string, step bool) {
		switch {
		case strings.HasPrefix(uses, "./"):
			if !step {
				return // a local reusable workflow: act reads it from the checkout
			}
		case strings.HasPrefix(uses, "docker://"):
			problems = append(problems, fmt.Sprintf("line %d (%s): %s: docker:// actions need a Docker engine, which act's host mode does not have", line, where, uses))
		default:
			u, ok := ParseUses(uses)
			if !ok {
				problems = append(problems, fmt.Sprintf("line %d (%s): %q is not OWNER/REPO[/PATH]@REF", line, where, uses))
				return
			}
			if _, ok := mapped[u.Key()]; !ok {
				problems = append(problems, fmt.Sprintf("line %d (%s): %s is not mapped to a local directory; act would fetch it: add Actions[%q] (this repository's checkout, or a stub from Stubs)", line, where, uses, u.Key()))
			}
		}
	}
	for _, j := range sortedJobs(w) {
		where := "job " + j.ID.Value
		if j.WorkflowCall != nil && j.WorkflowCall.Uses != nil {
			check(where, j.WorkflowCall.Uses.Pos.Line, j.WorkflowCall.Uses.Value, false)
		}
		for _, st := range j.Steps {
			if ea, ok := st.Exec.(*actionlint.ExecAction); ok && ea.Uses != nil {
				check(where, ea.Uses.Pos.Line, ea.Uses.Value, true)
			}
		}
	}
	if len(problems) > 0 {
		return &OfflineError{Problems: problems}
	}
	return nil
}

func sortedJobs(w *actionlint.Workflow) []*actionlint.Job {
	jobs := make([]*actionlint.Job, 0, len(w.Jobs))
	for _, j := range w.Jobs {
		if j != nil && j.ID != nil {
			jobs = append(jobs, j)
		}
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].Pos.Line < jobs[b].Pos.Line })
	return jobs
}
