package runners

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors of the page decoders. A body that is not JSON wraps
// ErrNotJSON; the others are JSON that is not an inventory page.
var (
	ErrNotJSON   = errors.New("not valid JSON")
	ErrNoTotal   = errors.New("the page has no total_count")
	ErrInvalidID = errors.New("an entry has no valid id")
)

// groupsPage and runnersPage are the fields of GitHub's runner-group and
// runner listings the preflight uses
// (https://docs.github.com/en/rest/actions/self-hosted-runner-groups).
// Label names stay raw, so a label whose name is not a string is dropped
// rather than failing the whole page.
type groupsPage struct {
	TotalCount   *int `json:"total_count"`
	RunnerGroups []*struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"runner_groups"`
}

type runnersPage struct {
	TotalCount *int `json:"total_count"`
	Runners    []*struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Busy   bool   `json:"busy"`
		Labels []*struct {
			Name json.RawMessage `json:"name"`
		} `json:"labels"`
	} `json:"runners"`
}

// DecodeGroupsPage decodes one page of GET
// /orgs/{org}/actions/runner-groups: the groups on it, in order, and its
// total_count. Every group id must be a positive safe integer.
func DecodeGroupsPage(body []byte) (groups []Group, total int, err error) {
	var p groupsPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if p.TotalCount == nil {
		return nil, 0, ErrNoTotal
	}
	for _, g := range p.RunnerGroups {
		if g == nil || !ValidID(g.ID) {
			return nil, 0, ErrInvalidID
		}
		groups = append(groups, Group{ID: g.ID, Name: g.Name})
	}
	return groups, *p.TotalCount, nil
}

// DecodeRunnersPage decodes one page of GET
// /orgs/{org}/actions/runner-groups/{id}/runners, the runners listed under
// group groupID: the runners on it, in order, its total_count, and how many
// labels were dropped because their name is not a JSON string (no runs-on
// list can name such a label, so it can never satisfy a label set). Every
// runner id must be a positive safe integer.
func DecodeRunnersPage(body []byte, groupID int64) (rs []Runner, total, ignoredLabels int, err error) {
	var p runnersPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if p.TotalCount == nil {
		return nil, 0, 0, ErrNoTotal
	}
	for _, r := range p.Runners {
		if r == nil || !ValidID(r.ID) {
			return nil, 0, 0, ErrInvalidID
		}
		rr := Runner{ID: r.ID, Name: r.Name, Status: r.Status, Busy: r.Busy, GroupID: groupID}
		for _, l := range r.Labels {
			var name string
			if l == nil || json.Unmarshal(l.Name, &name) != nil {
				ignoredLabels++
				continue
			}
			if name != "" {
				rr.Labels = append(rr.Labels, name)
			}
		}
		rs = append(rs, rr)
	}
	return rs, *p.TotalCount, ignoredLabels, nil
}
