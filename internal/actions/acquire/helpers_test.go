package acquire_test

import (
	"io"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
)

// nil2io is an IO that discards, for lockaction.Finish in tests.
func nil2io(j *actiontest.Job) *actionio.IO {
	return actionio.New(func(string) string { return "" }, io.Discard)
}

// summaryValue returns the value cell of field in a summary table.
func summaryValue(summary, field string) []string {
	var out []string
	for _, line := range strings.Split(summary, "\n") {
		if rest, ok := strings.CutPrefix(line, "| "+field+" | "); ok {
			out = append(out, strings.TrimSuffix(rest, " |"))
		}
	}
	return out
}

func firstNonEmpty(v []string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
