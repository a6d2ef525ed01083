package policy

import (
	"path"
	"sort"
)

// NeedKind says what a reader must fetch for a Need.
type NeedKind string

// Need kinds.
const (
	// NeedLocalAction is a local action directory: the reader adds
	// <Path>/action.yml or <Path>/action.yaml to Snapshot.Files.
	NeedLocalAction NeedKind = "local-action"
	// NeedLocalWorkflow is a local reusable workflow file (Snapshot.Files).
	NeedLocalWorkflow NeedKind = "local-workflow"
	// NeedRemoteWorkflow is a pinned remote reusable workflow: Ref is
	// "owner/repo/path@sha" (Snapshot.Remote).
	NeedRemoteWorkflow NeedKind = "remote-workflow"
)

// Need is one file the analysis references but the snapshot lacks.
type Need struct {
	Kind NeedKind
	// Path is the directory or file in the snapshot's repository.
	Path string
	// Ref is set for NeedRemoteWorkflow.
	Ref string
	// Owner, Repo and Commit split Ref.
	Owner, Repo, Commit, RemotePath string
}

// References lists what the snapshot's workflows and local actions refer
// to but the snapshot does not hold yet: a reader adds them and asks
// again until the list is empty (or holds only what it already tried).
// Mutable remote references are never listed: they are findings, not
// something to read.
func References(s Snapshot) []Need {
	seen := map[string]bool{}
	var out []Need
	add := func(n Need) {
		k := string(n.Kind) + "\x00" + n.Path + "\x00" + n.Ref
		if !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	visitedActions := map[string]bool{}
	var action func(dir string)
	action = func(dir string) {
		if visitedActions[dir] {
			return
		}
		visitedActions[dir] = true
		var src []byte
		var p string
		for _, name := range []string{"action.yml", "action.yaml"} {
			if b, ok := s.Files[path.Join(dir, name)]; ok {
				src, p = b, path.Join(dir, name)
				break
			}
		}
		if p == "" {
			add(Need{Kind: NeedLocalAction, Path: dir})
			return
		}
		act := parseAction(p, src)
		for _, cs := range act.steps {
			if cs.uses != nil && cs.uses.kind == usesLocal && !isWorkflowFile(cs.uses.path) {
				action(cs.uses.path)
			}
		}
	}
	var visit func(w *workflow)
	visited := map[string]bool{}
	visit = func(w *workflow) {
		if w.broken || visited[w.path] {
			return
		}
		visited[w.path] = true
		for _, j := range w.jobs {
			for _, st := range j.steps {
				if st.uses != nil && st.uses.kind == usesLocal {
					action(st.uses.path)
				}
			}
			if j.call == nil {
				continue
			}
			u := *j.call
			var key string
			switch {
			case u.kind == usesLocal && w.remote == nil:
				if src, ok := s.Files[u.path]; ok {
					visit(parseWorkflow(u.path, src))
				} else {
					add(Need{Kind: NeedLocalWorkflow, Path: u.path})
				}
				continue
			case u.kind == usesLocal:
				key = w.remote.owner + "/" + w.remote.repo + "/" + u.path + "@" + w.remote.ref
			case u.kind == usesRemote && u.isWorkflow() && u.pinned():
				key = u.raw
			default:
				continue
			}
			ref := parseUses(key)
			if src, ok := s.Remote[key]; ok {
				cw := parseWorkflow(key, src)
				cw.remote = &ref
				visit(cw)
				continue
			}
			add(Need{Kind: NeedRemoteWorkflow, Ref: key, Owner: ref.owner, Repo: ref.repo, Commit: ref.ref, RemotePath: ref.path})
		}
	}
	for _, fp := range workflowFiles(s.Files) {
		visit(parseWorkflow(fp, s.Files[fp]))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Path+out[i].Ref < out[j].Path+out[j].Ref
	})
	return out
}
