// Package historycli is the orchestration of `buildlock history verify` and
// `buildlock history report` (docs/history.md): flags and environment,
// the reader's credentials, loading each lock's history through
// internal/history/ghsource, verifying it with internal/history, the
// checkpoint files, the statistics and what-if replay, the renderers, and
// (verify --issue) the one alert issue kept through internal/githubissue.
// It only reads lock state: the token needs contents: read on the lock
// repository (issues: write for --issue).
package historycli
