package store

import (
	"errors"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// ReasonBranchRules is the stable reason code of a state write that a branch
// rule refused (BranchRulesError).
const ReasonBranchRules = "state-branch-rules"

// BranchRulesError is a write to the state branch that a branch rule (a
// ruleset or classic branch protection) refused. It is never a
// compare-and-swap conflict: the store stops at the first refusal instead of
// re-reading and trying again, because no later round can pass the rule, and
// every job of the organization would otherwise spend its whole round budget
// on it. Nothing was written.
type BranchRulesError struct {
	// Owner, Repo and Branch name the refused branch.
	Owner, Repo, Branch string
	// Path is the file whose write was refused.
	Path string
	// Err is the client's error, with GitHub's message and request id.
	Err error
}

// Error says what was refused, why, and what an operator does about it.
func (e *BranchRulesError) Error() string {
	return fmt.Sprintf("writing %s on branch %s of %s/%s was refused by a branch rule (a ruleset or branch protection on %s), so nothing was written and retrying cannot help: %v. "+
		"Run `buildlock doctor --lock-repository %s/%s` to list the rules on %s, then exempt the writer App from them or remove the rule (docs/adopting.md, the lock-state branch)",
		e.Path, e.Branch, e.Owner, e.Repo, e.Branch, e.Err, e.Owner, e.Repo, e.Branch)
}

// Unwrap returns the client's error.
func (e *BranchRulesError) Unwrap() error { return e.Err }

// ReasonCode is ReasonBranchRules.
func (e *BranchRulesError) ReasonCode() string { return ReasonBranchRules }

// IsBranchRules reports whether err is (or wraps) a BranchRulesError, or a
// client error for a write a branch rule refused.
func IsBranchRules(err error) bool {
	var br *BranchRulesError
	return errors.As(err, &br) || ghclient.IsBranchRules(err)
}

// refusal wraps a write error of the state branch that a branch rule
// refused; any other error is returned as it is.
func (s *Store) refusal(err error, path string) error {
	if err == nil || !ghclient.IsBranchRules(err) {
		return err
	}
	return &BranchRulesError{Owner: s.opts.Owner, Repo: s.opts.Repo, Branch: s.opts.Branch, Path: path, Err: err}
}
