// Package render draws the reports of `buildlock history`: the verify
// report as text (the first violation with the two versions side by side)
// and JSON; the seat-demand report as one self-contained HTML page (inline
// SVG charts, inline CSS, no script, font or other external reference, so
// it opens offline), as Markdown with Mermaid charts for
// $GITHUB_STEP_SUMMARY, as JSON, and as OpenMetrics text for Prometheus.
// Every renderer is a pure function of a Report.
package render
