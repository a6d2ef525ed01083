package lockstate

import (
	"fmt"
	"slices"
	"strings"
)

// Seat and priority bounds (issue 25, schema 6).
const (
	// MaxSeatNameLength bounds a seat or label name.
	MaxSeatNameLength = 64
	// MaxSeatLabels bounds the labels of one seat (and of one request).
	MaxSeatLabels = 16
	// MaxPriority is the highest priority class; 0 is the default.
	MaxPriority = 9
)

// SeatConfig is one named seat of the config's "seats" list.
type SeatConfig struct {
	// Name (1-64 of [a-z0-9._-], unique in the list) is what a holder
	// records and what acquire outputs, so a workflow can select the
	// matching secret.
	Name string
	// Labels (1-16 names of the same charset, sorted and unique) are what
	// a waiter's seat labels must be a subset of.
	Labels []string
}

// Carries reports whether the seat carries every label of want.
func (c SeatConfig) Carries(want []string) bool {
	for _, l := range want {
		if !slices.Contains(c.Labels, l) {
			return false
		}
	}
	return true
}

// PriorityConfig is the config's optional "priority" object: who may ask
// for a priority class above 0.
type PriorityConfig struct {
	// Max (0-9) is the highest class any caller may use.
	Max int
	// MaxForPullRequests (0-9, at most Max) is the highest class a
	// pull-request run may use.
	MaxForPullRequests int
	// Repositories, when not empty, is the comma-separated list of
	// owner/name repositories allowed above 0; every other repository is
	// held to 0. A string keeps Config comparable.
	Repositories string
}

// RepositoryList returns Repositories as a slice (nil when empty).
func (p PriorityConfig) RepositoryList() []string {
	if p.Repositories == "" {
		return nil
	}
	return strings.Split(p.Repositories, ",")
}

// SeatList is the config's named seats in config order, held in a
// comparable canonical form ("name=label,label;name=label") so Config
// stays comparable. The zero value is no named seats.
type SeatList struct{ enc string }

// NewSeatList returns the SeatList of seats (Config.validate checks them).
func NewSeatList(seats []SeatConfig) SeatList {
	parts := make([]string, len(seats))
	for i, s := range seats {
		parts[i] = s.Name + "=" + strings.Join(s.Labels, ",")
	}
	return SeatList{enc: strings.Join(parts, ";")}
}

// List returns the seats in config order (nil when none).
func (l SeatList) List() []SeatConfig {
	if l.enc == "" {
		return nil
	}
	parts := strings.Split(l.enc, ";")
	out := make([]SeatConfig, len(parts))
	for i, p := range parts {
		name, labels, _ := strings.Cut(p, "=")
		out[i].Name = name
		if labels != "" {
			out[i].Labels = strings.Split(labels, ",")
		}
	}
	return out
}

// Len returns the number of named seats.
func (l SeatList) Len() int {
	if l.enc == "" {
		return 0
	}
	return strings.Count(l.enc, ";") + 1
}

// PriorityCaller is what the priority privilege depends on. The action
// takes both from the runner's own variables (GITHUB_REPOSITORY,
// GITHUB_EVENT_NAME), never from inputs.
type PriorityCaller struct {
	Repository  string
	PullRequest bool
}

// SeatSecretSuffix is the part of a secret name that selects seat's
// license: the name upper-cased with '.' and '-' as '_' ("pro-a-1" is
// PRO_A_1), because GitHub secret names may hold only letters, digits and
// underscores and are not case-sensitive. acquire outputs it as
// seat-secret-suffix; a config whose seats share one is refused.
func SeatSecretSuffix(seat string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '.' || r == '-':
			return '_'
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, seat)
}

// ValidSeatName reports whether v is a valid seat or label name: 1-64
// characters of [a-z0-9._-].
func ValidSeatName(v string) bool {
	if v == "" || len(v) > MaxSeatNameLength {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NormalizeLabels returns labels sorted and deduplicated, refusing an
// invalid name or more than MaxSeatLabels distinct labels. nil and empty
// mean any seat and return nil.
func NormalizeLabels(labels []string) ([]string, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		if !ValidSeatName(l) {
			return nil, newError(CodeInvalidSeatRequest, fmt.Sprintf("seat label %q must be 1-%d characters of [a-z0-9._-]", clip(l, 80), MaxSeatNameLength))
		}
		out = append(out, l)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxSeatLabels {
		return nil, newError(CodeInvalidSeatRequest, fmt.Sprintf("a label set has %d labels, more than %d", len(out), MaxSeatLabels))
	}
	return out, nil
}

// ParseLabelExpression parses acquire's seat-labels input: one label, or
// "a,b" for all of them (spaces around names are ignored). "" means any
// seat.
func ParseLabelExpression(expr string) ([]string, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, nil
	}
	parts := strings.Split(expr, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return NormalizeLabels(parts)
}

// SeatLabels returns every label any configured seat carries, sorted.
func (c Config) SeatLabels() []string {
	var out []string
	for _, s := range c.Seats.List() {
		out = append(out, s.Labels...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Seat returns the configured seat named name.
func (c Config) Seat(name string) (SeatConfig, bool) {
	for _, s := range c.Seats.List() {
		if s.Name == name {
			return s, true
		}
	}
	return SeatConfig{}, false
}

// CheckLabels refuses (CodeNoMatchingSeat) a label set that no configured
// seat carries, naming the labels that exist. An empty set always passes:
// it matches any seat. labels must be normalized (NormalizeLabels).
func CheckLabels(cfg Config, labels []string) error {
	if len(labels) == 0 {
		return nil
	}
	for _, s := range cfg.Seats.List() {
		if s.Carries(labels) {
			return nil
		}
	}
	exist := "none (the lock config names no labelled seats)"
	if l := cfg.SeatLabels(); len(l) > 0 {
		exist = strings.Join(l, ", ")
	}
	return newError(CodeNoMatchingSeat, fmt.Sprintf("no configured seat carries all of the labels %s; the labels that exist: %s", strings.Join(labels, ","), exist))
}

// AllowedPriority is the highest priority class cfg allows caller: 0
// without a priority config; the config's max, capped by
// maxForPullRequests for a pull-request run and by 0 for a repository
// outside a non-empty repositories list.
func AllowedPriority(cfg Config, caller PriorityCaller) int {
	p := cfg.Priority
	allowed := p.Max
	if caller.PullRequest {
		allowed = min(allowed, p.MaxForPullRequests)
	}
	if repos := p.RepositoryList(); len(repos) > 0 && !slices.ContainsFunc(repos, func(r string) bool { return strings.EqualFold(r, caller.Repository) }) {
		allowed = 0
	}
	return allowed
}

// CheckPriority refuses a requested class outside 0..9
// (CodeInvalidSeatRequest) or above AllowedPriority
// (CodePriorityNotAllowed). The action calls it before any write.
func CheckPriority(cfg Config, caller PriorityCaller, priority int) error {
	if priority < 0 || priority > MaxPriority {
		return newError(CodeInvalidSeatRequest, fmt.Sprintf("priority %d is outside 0..%d", priority, MaxPriority))
	}
	if allowed := AllowedPriority(cfg, caller); priority > allowed {
		who := "this repository"
		if caller.PullRequest {
			who = "a pull-request run"
		}
		return newError(CodePriorityNotAllowed, fmt.Sprintf("priority %d is above %d, the most the lock config allows %s", priority, allowed, who))
	}
	return nil
}

// validateSeats checks the seats and priority fields of a Config.
func (c Config) validateSeats() error {
	bad := func(format string, args ...any) error {
		return newError(CodeInvalidConfig, "validate lock config: "+fmt.Sprintf(format, args...))
	}
	if (c.Seats.Len() > 0 || c.Priority != (PriorityConfig{})) && !c.FencedAdmission {
		return bad("seats and priority require fencedAdmission (schema 6)")
	}
	if n := c.Seats.Len(); n > 0 && n != c.MaxHolders {
		return bad("%d seats but maxHolders %d", n, c.MaxHolders)
	}
	names, suffixes := map[string]bool{}, map[string]string{}
	for _, s := range c.Seats.List() {
		if !ValidSeatName(s.Name) || names[s.Name] {
			return bad("seat name %q is invalid or repeated", clip(s.Name, 80))
		}
		names[s.Name] = true
		if other, ok := suffixes[SeatSecretSuffix(s.Name)]; ok {
			return bad("seats %s and %s have the same secret suffix %s (GitHub secret names allow only letters, digits and underscores, case-insensitively)", other, s.Name, SeatSecretSuffix(s.Name))
		}
		suffixes[SeatSecretSuffix(s.Name)] = s.Name
		if len(s.Labels) == 0 || len(s.Labels) > MaxSeatLabels || !slices.IsSorted(s.Labels) || len(slices.Compact(slices.Clone(s.Labels))) != len(s.Labels) {
			return bad("seat %s needs 1-%d sorted, unique labels", s.Name, MaxSeatLabels)
		}
		for _, l := range s.Labels {
			if !ValidSeatName(l) {
				return bad("seat %s label %q is invalid", s.Name, clip(l, 80))
			}
		}
	}
	if p := c.Priority; p != (PriorityConfig{}) {
		if p.Max < 0 || p.Max > MaxPriority || p.MaxForPullRequests < 0 || p.MaxForPullRequests > p.Max {
			return bad("priority max %d / maxForPullRequests %d must satisfy 0 <= maxForPullRequests <= max <= %d", p.Max, p.MaxForPullRequests, MaxPriority)
		}
		for _, r := range p.RepositoryList() {
			if !validRepository(r) {
				return bad("priority repository %q is not owner/name", clip(r, 120))
			}
		}
	}
	return nil
}
