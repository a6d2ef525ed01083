package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Replica lag and branch-head conflicts: two GitHub behaviours that change a
// client's decisions and that the emulator produces when asked to
// (Options.ReplicaLag, Options.CommitLatency; docs/emulator.md).

// DefaultReplicaLag is the realistic replica lag: public reports measure
// Contents API reads returning the previous version for "10+ seconds" after
// a write (https://github.com/PyGithub/PyGithub/issues/2709, a ~300 KB file
// through the Contents API url) and "up to 10 seconds" for raw reads
// (https://github.com/scripting/Scripting-News/issues/213); see also
// https://github.com/hub4j/github-api/issues/487 and
// https://github.com/google/go-github/issues/3566 (GitHub is "eventually
// consistent").
const DefaultReplicaLag = 10 * time.Second

// DefaultReplicaLagFraction is the share of reads a lagging replica serves.
// No public source measures it; the reports above say "sometimes" and
// "often", so one read in five is assumed (docs/emulator.md).
const DefaultReplicaLagFraction = 0.2

// DefaultCommitLatency is the realistic time one Contents API write takes to
// commit: concurrent writes to one branch whose commits overlap fail with
// 409 "is at <sha> but expected <sha>"
// (https://github.com/PyGithub/PyGithub/issues/1787,
// https://github.com/octokit/octokit.net/issues/2365,
// https://github.com/integrations/terraform-provider-github/issues/2909:
// different files, one branch). A Contents API write is a tree, a commit and
// a ref update on GitHub's side. The bench models a write as 500 ms, of
// which the first 250 ms is the latency of any request; the remaining 250 ms
// is the commit window assumed here (docs/emulator.md).
const DefaultCommitLatency = 250 * time.Millisecond

// laggedCommitLocked returns the commit a lagging replica serves for a read
// of branch whose head is head: the newest commit at least lag old, never
// older than the branch's first commit. It reports whether the read lags.
func (e *Emulator) laggedCommitLocked(r *repo, head *commit) (*commit, bool) {
	if e.opts.ReplicaLag <= 0 || head == nil {
		return head, false
	}
	if f := e.opts.ReplicaLagFraction; f > 0 && e.rng.Float64() >= f {
		return head, false
	}
	lag := time.Duration(e.rng.Int63n(int64(e.opts.ReplicaLag) + 1))
	cutoff := e.now().Add(-lag)
	cm := head
	for cm.Time.After(cutoff) && cm.Parent != "" {
		parent, ok := r.commits[cm.Parent]
		if !ok {
			break
		}
		cm = parent
	}
	return cm, cm != head
}

// isContentsWrite reports a Contents API PUT or DELETE.
func isContentsWrite(rt *route) bool {
	return rt != nil && (rt.method == http.MethodPut || rt.method == http.MethodDelete) && strings.HasPrefix(rt.pattern, "/repos/{owner}/{repo}/contents/")
}

// commitBaseLocked is the branch head a contents write reads when it
// arrives (its commit's parent), "" when the repository or branch is unknown
// (the handler then answers as usual).
func (e *Emulator) commitBaseLocked(params map[string]string, body []byte) string {
	r, ok := e.repos[repoKey(params["owner"], params["repo"])]
	if !ok {
		return ""
	}
	var b struct {
		Branch string `json:"branch"`
	}
	_ = json.Unmarshal(body, &b)
	if b.Branch == "" {
		b.Branch = r.DefaultBranch
	}
	return r.branches[b.Branch]
}

// headMovedLocked answers a contents write whose branch moved after it
// arrived: 409 "is at <head> but expected <base>", GitHub's text
// (https://github.com/PyGithub/PyGithub/issues/1787).
func (c *reqCtx) headMovedLocked(head string) *response {
	if c.commitBase == "" || head == c.commitBase {
		return nil
	}
	resp := errorResponse(http.StatusConflict, "is at "+head+" but expected "+c.commitBase, docsContentsPut)
	resp.conflict = true
	resp.headConflict = true
	return resp
}
