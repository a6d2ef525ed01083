package lockstate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// decodeSeatConfig reads the optional "seats" and "priority" keys of a lock
// config (issue 25) into cfg, after the flags. Both are strict: any
// problem (a wrong type, an unknown key, an invalid or repeated name, a
// seat count that disagrees with maxHolders, either key without
// fencedAdmission) refuses the entire config, like a flag without its
// prerequisite, and returns the warning; a half-understood seat list could
// hand one license to two jobs. The seat count becomes maxHolders.
func decodeSeatConfig(obj map[string]any, cfg *Config) string {
	seatsRaw, hasSeats := obj["seats"]
	prioRaw, hasPrio := obj["priority"]
	if !hasSeats && !hasPrio {
		return ""
	}
	if !cfg.FencedAdmission {
		return "lock config seats and priority require fencedAdmission=true (schema 6); using safe defaults for the entire config"
	}
	if hasSeats {
		seats, problem := decodeSeatList(seatsRaw)
		if problem != "" {
			return "lock config seats " + problem + "; using safe defaults for the entire config"
		}
		if _, has := obj["maxHolders"]; has && cfg.MaxHolders != len(seats) {
			return fmt.Sprintf("lock config names %d seats but maxHolders is %d (they must agree, or leave maxHolders out); using safe defaults for the entire config", len(seats), cfg.MaxHolders)
		}
		cfg.Seats, cfg.MaxHolders = NewSeatList(seats), len(seats)
	}
	if hasPrio {
		p, problem := decodePriorityConfig(prioRaw)
		if problem != "" {
			return "lock config priority " + problem + "; using safe defaults for the entire config"
		}
		cfg.Priority = p
	}
	return ""
}

// decodeSeatList decodes the "seats" array, or says what is wrong with it.
func decodeSeatList(v any) ([]SeatConfig, string) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > MaxHoldersCap {
		return nil, fmt.Sprintf("must be an array of 1 through %d seats", MaxHoldersCap)
	}
	names, suffixes := map[string]bool{}, map[string]string{}
	out := make([]SeatConfig, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("entry %d must be an object", i)
		}
		for k := range m {
			if k != "name" && k != "labels" {
				return nil, fmt.Sprintf("entry %d has unknown key %q (only name and labels)", i, clip(k, 40))
			}
		}
		name, ok := m["name"].(string)
		if !ok || !ValidSeatName(name) {
			return nil, fmt.Sprintf("entry %d name must be 1-%d characters of [a-z0-9._-]", i, MaxSeatNameLength)
		}
		if names[name] {
			return nil, fmt.Sprintf("name %s appears more than once", name)
		}
		names[name] = true
		if other, ok := suffixes[SeatSecretSuffix(name)]; ok {
			return nil, fmt.Sprintf("names %s and %s select the same secret suffix %s (GitHub secret names hold only letters, digits and underscores, case-insensitively)", other, name, SeatSecretSuffix(name))
		}
		suffixes[SeatSecretSuffix(name)] = name
		raw, ok := m["labels"].([]any)
		if !ok || len(raw) == 0 || len(raw) > MaxSeatLabels {
			return nil, fmt.Sprintf("seat %s labels must be an array of 1 through %d labels", name, MaxSeatLabels)
		}
		labels := make([]string, 0, len(raw))
		for _, l := range raw {
			s, ok := l.(string)
			if !ok || !ValidSeatName(s) {
				return nil, fmt.Sprintf("seat %s has a label that is not 1-%d characters of [a-z0-9._-]", name, MaxSeatNameLength)
			}
			labels = append(labels, s)
		}
		slices.Sort(labels)
		if len(slices.Compact(slices.Clone(labels))) != len(labels) {
			return nil, fmt.Sprintf("seat %s repeats a label", name)
		}
		out = append(out, SeatConfig{Name: name, Labels: labels})
	}
	return out, ""
}

// decodePriorityConfig decodes the "priority" object, or says what is
// wrong with it.
func decodePriorityConfig(v any) (PriorityConfig, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return PriorityConfig{}, "must be an object"
	}
	for k := range m {
		if k != "max" && k != "maxForPullRequests" && k != "repositories" {
			return PriorityConfig{}, fmt.Sprintf("has unknown key %q (only max, maxForPullRequests and repositories)", clip(k, 40))
		}
	}
	class := func(key string) (int, bool) {
		raw, has := m[key]
		if !has {
			return 0, true
		}
		if _, isNum := raw.(json.Number); !isNum {
			return 0, false
		}
		n, ok := configInteger(raw, false)
		return int(n), ok && n >= 0 && n <= MaxPriority
	}
	p := PriorityConfig{}
	var okMax, okPR bool
	if p.Max, okMax = class("max"); !okMax {
		return PriorityConfig{}, fmt.Sprintf("max must be an integer from 0 through %d", MaxPriority)
	}
	if p.MaxForPullRequests, okPR = class("maxForPullRequests"); !okPR || p.MaxForPullRequests > p.Max {
		return PriorityConfig{}, fmt.Sprintf("maxForPullRequests must be an integer from 0 through max (%d)", p.Max)
	}
	if raw, has := m["repositories"]; has {
		list, ok := raw.([]any)
		var repos []string
		if !ok {
			return PriorityConfig{}, "repositories must be an array of owner/name strings"
		}
		for _, r := range list {
			s, ok := r.(string)
			if !ok || !validRepository(s) {
				return PriorityConfig{}, "repositories must be an array of owner/name strings"
			}
			repos = append(repos, s)
		}
		p.Repositories = strings.Join(repos, ",")
	}
	return p, ""
}
