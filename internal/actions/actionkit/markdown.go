package actionkit

import (
	"strings"
)

// Row is one "field | value" row of a summary table.
type Row struct{ Field, Value string }

// Table renders a two-column markdown table with a bold heading line.
// Values are escaped so a pipe or newline in a holder ID cannot break it.
func Table(title string, rows []Row) string {
	var b strings.Builder
	b.WriteString("### ")
	b.WriteString(Cell(title))
	b.WriteString("\n\n| | |\n|---|---|\n")
	for _, r := range rows {
		b.WriteString("| ")
		b.WriteString(Cell(r.Field))
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

// Cell escapes text for a markdown table cell.
func Cell(s string) string {
	r := strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

// Code renders s as inline code inside a table cell.
func Code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(Cell(s), "`", "'") + "`"
}

// Link renders a markdown link when url is an http(s) URL, else the text.
func Link(text, url string) string {
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return Cell(text)
	}
	return "[" + strings.NewReplacer("[", `\[`, "]", `\]`).Replace(Cell(text)) + "](" + strings.ReplaceAll(url, ")", "%29") + ")"
}
