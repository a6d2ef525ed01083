package bench

import (
	"iter"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// versionState is one committed version of the workload's lock state with
// its decoded document.
type versionState struct {
	checker.Version
	State *lockstate.State
}

// decodedStates yields each version of versions (oldest first) with its
// index and decoded state, skipping deletions and documents that do not
// decode (the checker reports those).
func decodedStates(versions []checker.Version) iter.Seq2[int, versionState] {
	return func(yield func(int, versionState) bool) {
		for i, v := range versions {
			if v.Content == nil {
				continue
			}
			st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: simLock, ServerURL: simServerURL})
			if err != nil {
				continue
			}
			if !yield(i, versionState{Version: v, State: st}) {
				return
			}
		}
	}
}
