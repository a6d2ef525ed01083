package actionkit

import (
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Row is one "field | value" row of a summary table.
type Row struct{ Field, Value string }

// Table renders a two-column markdown table with a heading line. The title
// and field names are escaped here; each value must already be rendered
// through internal/markdown (Text, Code, Link) or be trusted text (numbers,
// enum constants).
func Table(title string, rows []Row) string {
	var b strings.Builder
	b.WriteString("### ")
	b.WriteString(markdown.Text(title))
	b.WriteString("\n\n| | |\n|---|---|\n")
	for _, r := range rows {
		b.WriteString("| ")
		b.WriteString(markdown.Text(r.Field))
		b.WriteString(" | ")
		v := r.Value
		if v == "" {
			v = "—"
		}
		b.WriteString(v)
		b.WriteString(" |\n")
	}
	b.WriteString("\n")
	return b.String()
}
