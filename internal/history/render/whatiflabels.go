package render

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"

// LabelRow is one label of a named-seat lock's what-if (issue 25): the
// waits of the jobs that asked for it with the observed seat list (Now)
// and with one seat more carrying it (Then), and every job's waits in
// both.
type LabelRow struct {
	Label string
	// Seats is how many configured seats carry the label now.
	Seats           int
	Now, Then       history.Dist
	AllNow, AllThen history.Dist
}

// LabelWhatIf returns one row per label scenario of wi, in label order
// (none for a lock without named seats).
func LabelWhatIf(wi *history.WhatIf) []LabelRow {
	if wi == nil || len(wi.LabelScenarios) == 0 || len(wi.Scenarios) == 0 {
		return nil
	}
	base := wi.Scenarios[0]
	var rows []LabelRow
	for _, sc := range wi.LabelScenarios {
		rows = append(rows, LabelRow{Label: sc.Label, Seats: sc.SeatsWithLabel - 1,
			Now: labelDist(base, sc.Label), Then: labelDist(sc, sc.Label), AllNow: base.Wait, AllThen: sc.Wait})
	}
	return rows
}

func labelDist(sc history.Scenario, label string) history.Dist {
	for _, g := range sc.ByLabel {
		if g.Key == label {
			return g.Wait
		}
	}
	return history.Dist{}
}
