package lockaction

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigNote: a later step of the job gets back the config file
// acquire read, with its age, while the read is younger than
// ConfigNoteMaxAge; a note for another API, lock repository or lock, an
// empty, unreadable or future one, or one that old is not used.
func TestConfigNote(t *testing.T) {
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com"}
	content := []byte(`{"maxHolders":2}`)
	read := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()

	require.NoError(t, RememberConfig(dir, target, read, nil), "a file that was not read leaves no note")
	_, _, ok := RecentConfig(dir, target, read)
	assert.False(t, ok)

	require.NoError(t, RememberConfig(dir, target, read, content))
	got, age, ok := RecentConfig(dir, target, read.Add(10*time.Second))
	require.True(t, ok)
	assert.Equal(t, content, got)
	assert.Equal(t, 10*time.Second, age)
	_, _, ok = RecentConfig(dir, target, read.Add(ConfigNoteMaxAge-time.Millisecond))
	assert.True(t, ok, "just younger than the bound")
	_, _, ok = RecentConfig(dir, target, read.Add(ConfigNoteMaxAge))
	assert.False(t, ok, "as old as the bound")
	_, _, ok = RecentConfig(dir, target, read.Add(-time.Second))
	assert.False(t, ok, "read after now: a clock that went back")
	_, _, ok = RecentConfig("", target, read)
	assert.False(t, ok, "no RUNNER_TEMP, no note")

	for name, edit := range map[string]func(*Target){
		"another API":             func(t *Target) { t.APIURL = "https://ghe.example.com/api/v3" },
		"another lock repository": func(t *Target) { t.Repo = "other-lock" },
		"another lock":            func(t *Target) { t.Lock = "other" },
	} {
		other := target
		edit(&other)
		_, _, ok := RecentConfig(dir, other, read)
		assert.False(t, ok, name)
	}
	path := configNotePath(dir, target)
	require.NoError(t, os.WriteFile(path, []byte(`{"apiUrl":"https://api.github.com","repository":"acme/build-lock","lock":"seats","readAt":"2026-12-06T10:00:00Z"}`), 0o600))
	_, _, ok = RecentConfig(dir, target, read)
	assert.False(t, ok, "no content")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	_, _, ok = RecentConfig(dir, target, read)
	assert.False(t, ok, "unreadable")
}
