package runners

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// MaxSafeInteger is the largest id accepted (2^53 − 1, JavaScript's
// Number.MAX_SAFE_INTEGER, as the reference requires of group and runner
// ids: unity-lifecycle-facts.md §6).
const MaxSafeInteger = 1<<53 - 1

// Runner statuses GitHub reports for a self-hosted runner
// (https://docs.github.com/en/rest/actions/self-hosted-runners).
const (
	StatusOnline  = "online"
	StatusOffline = "offline"
)

// Group is a runner group visible to the calling repository.
type Group struct {
	ID   int64
	Name string
}

// Runner is a registered self-hosted runner as GitHub lists it.
type Runner struct {
	ID     int64
	Name   string
	Status string // "online" or "offline"; anything else counts as not online
	Busy   bool
	Labels []string
	// GroupID is the group the runner was listed under.
	GroupID int64
}

// Online reports whether GitHub says the runner is connected.
func (r Runner) Online() bool { return strings.EqualFold(r.Status, StatusOnline) }

// has reports whether the runner carries every label of set
// (case-insensitively; set is already lowercase).
func (r Runner) has(set LabelSet) bool {
	for _, want := range set {
		if !slices.ContainsFunc(r.Labels, func(l string) bool { return jsstr.ToLower(l) == want }) {
			return false
		}
	}
	return true
}

// ValidID reports whether id is a positive safe integer.
func ValidID(id int64) bool { return id > 0 && id <= MaxSafeInteger }

// Dedupe drops runners listed more than once (the same id under two pages or
// two groups), keeping the first listing, and returns the rest in input
// order.
func Dedupe(rs []Runner) []Runner {
	seen := make(map[int64]bool, len(rs))
	out := make([]Runner, 0, len(rs))
	for _, r := range rs {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		out = append(out, r)
	}
	return out
}

// SetReport is the availability of one required label set.
type SetReport struct {
	Labels LabelSet
	// Runners are the registered runners carrying every label, sorted by
	// name (then id).
	Runners []Runner
	// Online and Busy count those runners.
	Online, Busy int
}

// Available reports whether some registered runner can take the job: busy
// and offline runners count, because GitHub holds the queued job until one
// of them picks it up.
func (s SetReport) Available() bool { return len(s.Runners) > 0 }

// AllOffline reports a set whose runners are all offline: the job waits for
// one of them to come back (a reboot, a service restart).
func (s SetReport) AllOffline() bool { return len(s.Runners) > 0 && s.Online == 0 }

// AllBusy reports a set whose runners are all busy: a saturated pool.
func (s SetReport) AllBusy() bool { return len(s.Runners) > 0 && s.Busy == len(s.Runners) }

// Report is the verdict of one preflight.
type Report struct {
	// Sets are in declaration order.
	Sets []SetReport
	// Registered, Online and Busy count every distinct runner in the
	// visible groups (not only the matching ones).
	Registered, Online, Busy int
}

// Missing returns the label sets no registered runner satisfies.
func (r Report) Missing() []LabelSet {
	var out []LabelSet
	for _, s := range r.Sets {
		if !s.Available() {
			out = append(out, s.Labels)
		}
	}
	return out
}

// Evaluate matches every label set against the (deduplicated) runners.
func Evaluate(sets []LabelSet, rs []Runner) Report {
	rs = Dedupe(rs)
	rep := Report{Registered: len(rs)}
	for _, r := range rs {
		if r.Online() {
			rep.Online++
		}
		if r.Busy {
			rep.Busy++
		}
	}
	for _, set := range sets {
		sr := SetReport{Labels: set}
		for _, r := range rs {
			if !r.has(set) {
				continue
			}
			sr.Runners = append(sr.Runners, r)
			if r.Online() {
				sr.Online++
			}
			if r.Busy {
				sr.Busy++
			}
		}
		slices.SortStableFunc(sr.Runners, func(a, b Runner) int {
			return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
		})
		rep.Sets = append(rep.Sets, sr)
	}
	return rep
}

// MaxNamedRunners bounds how many runner names one message lists.
const MaxNamedRunners = 20

// RunnerNames lists the names of rs for a message, at most MaxNamedRunners,
// then "and N more".
func RunnerNames(rs []Runner) string {
	names := make([]string, 0, min(len(rs), MaxNamedRunners))
	for i, r := range rs {
		if i == MaxNamedRunners {
			break
		}
		names = append(names, DisplayName(r.Name))
	}
	s := strings.Join(names, ", ")
	if extra := len(rs) - MaxNamedRunners; extra > 0 {
		s += fmt.Sprintf(" and %d more", extra)
	}
	return s
}

// DisplayName bounds a runner name for a log line or summary cell: control
// characters become '?' and the name is cut at 100 bytes.
func DisplayName(name string) string {
	const limit = 100
	var b strings.Builder
	for i, r := range name {
		if i >= limit {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "(unnamed)"
	}
	return b.String()
}
