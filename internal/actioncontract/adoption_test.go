package actioncontract_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockinit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestAdoptionDocumentsAgree keeps what a newcomer reads in agreement:
// docs/adopting.md's lock config, locks/example.config.json and what
// `buildlock init` writes are the same bytes; that config enables every
// feature the README's consumer workflow requires of its lock; and on a
// brand-new lock (no state file) the workflow's first acquire, with its own
// inputs, is admitted at once.
func TestAdoptionDocumentsAgree(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "adopting.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "<!-- lock-config:begin -->\n```json\n")
	block, _, ok2 := strings.Cut(after, "```\n<!-- lock-config:end -->")
	require.True(t, ok && ok2, "docs/adopting.md has no lock-config block between its markers")
	example, err := os.ReadFile(filepath.Join(repoRoot, "locks", "example.config.json"))
	require.NoError(t, err)
	assert.Equal(t, string(lockinit.ConfigJSON(2)), block, "docs/adopting.md's config is not what buildlock init --seats 2 writes")
	assert.Equal(t, string(lockinit.ConfigJSON(2)), string(example), "locks/example.config.json is not what buildlock init --seats 2 writes")
	cfg, warnings := lockstate.DecodeConfig([]byte(block))
	require.Empty(t, warnings)

	raw, wf := readExample(t)
	var acquires []exampleStep
	lockNames := map[string]bool{}
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if m := ownActionRE.FindStringSubmatch(st.Uses); m != nil {
				if ln := st.With["lock-name"]; ln != "" {
					lockNames[ln] = true
				}
				if m[1] == "acquire-build-lock" || m[1] == "acquire-build-lock-with-cleanup" {
					acquires = append(acquires, st)
				}
			}
		}
	}
	require.NotEmpty(t, acquires, "the README workflow acquires nothing")
	for name := range lockNames {
		assert.Contains(t, string(doc), "--lock "+name, "docs/adopting.md does not init the README workflow's lock %q", name)
	}
	for _, st := range acquires {
		if st.With["require-resource-lifecycle"] == "true" {
			assert.True(t, cfg.ResourceLifecycle, "the README workflow requires resourceLifecycle; the documented config does not enable it")
		}
		if v := st.With["minimum-release-cooldown-seconds"]; v != "" {
			assert.NotContains(t, v, "${{", "minimum-release-cooldown-seconds must be a literal to be checked")
		}
		assert.NotEmpty(t, st.With["runner-id"], "the README's acquire names its runner")
	}
	if strings.Contains(raw, "outputs.fencing-token") {
		assert.Equal(t, lockstate.FencedSchemaVersion, lockstate.TargetSchema(cfg), "the README workflow uses the fencing token: its lock must be at schema 6")
	}

	// The first acquire on a lock with no state file is admitted, at the
	// schema the config asks for.
	now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	id := lockstate.Identity{HolderID: "your-org/game:1:licensed:6000.0.40f1-editmode", Repository: "your-org/game", Workflow: "Unity",
		Job: "licensed", RunID: "1", RunAttempt: "1", RunURL: "https://github.com/your-org/game/actions/runs/1", RunnerID: "win-01", QueuedAt: now}
	out, dec, err := lockstate.Acquire(lockstate.Empty("unity"), cfg, lockstate.AcquireRequest{Identity: id, Lease: 4 * time.Hour}, now)
	require.NoError(t, err)
	assert.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
	assert.Equal(t, lockstate.TargetSchema(cfg), out.SchemaVersion)
}
