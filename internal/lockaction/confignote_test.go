package lockaction

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigNote: a later step of the job gets back the config file
// acquire read, with its age, while the read is younger than
// ConfigNoteMaxAge; a note for another API, lock repository or lock, an
// empty, unreadable or future one, one that old, and one that does not
// carry the MAC of the App's private key (a step without the key wrote or
// edited it) is not used.
func TestConfigNote(t *testing.T) {
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com"}
	creds := AppCredentials{AppID: 12, PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nkey one\n-----END RSA PRIVATE KEY-----\n")}
	content := []byte(`{"maxHolders":2}`)
	read := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	recent := func(tg Target, c AppCredentials, now time.Time) bool {
		_, _, ok := RecentConfig(dir, tg, c, now)
		return ok
	}

	require.NoError(t, RememberConfig(dir, target, creds, read, nil, nil), "a file that was not read leaves no note")
	assert.False(t, recent(target, creds, read))
	require.NoError(t, RememberConfig(dir, target, AppCredentials{}, read, content, nil), "no key, no note")
	assert.False(t, recent(target, creds, read))

	require.NoError(t, RememberConfig(dir, target, creds, read, content, nil))
	got, age, ok := RecentConfig(dir, target, creds, read.Add(10*time.Second))
	require.True(t, ok)
	assert.Equal(t, content, got)
	assert.Equal(t, 10*time.Second, age)
	assert.True(t, recent(target, creds, read.Add(ConfigNoteMaxAge-time.Millisecond)), "just younger than the bound")
	assert.False(t, recent(target, creds, read.Add(ConfigNoteMaxAge)), "as old as the bound")
	assert.False(t, recent(target, creds, read.Add(-time.Second)), "read after now: a clock that went back")
	_, _, ok = RecentConfig("", target, creds, read)
	assert.False(t, ok, "no RUNNER_TEMP, no note")
	assert.False(t, recent(target, AppCredentials{AppID: 12, PrivateKey: []byte("another key")}, read), "another App key")
	assert.False(t, recent(target, AppCredentials{AppID: 12}, read), "no key to verify with")
	for name, edit := range map[string]func(*Target){
		"another API":             func(t *Target) { t.APIURL = "https://ghe.example.com/api/v3" },
		"another lock repository": func(t *Target) { t.Repo = "other-lock" },
		"another lock":            func(t *Target) { t.Lock = "other" },
	} {
		other := target
		edit(&other)
		assert.False(t, recent(other, creds, read), name)
	}

	path := configNotePath(dir, target)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var good configNote
	require.NoError(t, json.Unmarshal(data, &good))
	for name, edit := range map[string]func(*configNote){
		"more seats, same MAC": func(n *configNote) { n.Content = []byte(`{"maxHolders":9}`) },
		"younger, same MAC":    func(n *configNote) { n.ReadAt = n.ReadAt.Add(30 * time.Second) },
		"no MAC":               func(n *configNote) { n.MAC = nil },
		"another lock's MAC":   func(n *configNote) { n.Lock = "other"; n.MAC = configNoteMAC(creds, *n); n.Lock = "seats" },
		"no content":           func(n *configNote) { n.Content = nil; n.MAC = configNoteMAC(creds, *n) },
	} {
		n := good
		edit(&n)
		data, err := json.Marshal(n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		assert.False(t, recent(target, creds, read.Add(time.Second)), name)
	}
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	assert.False(t, recent(target, creds, read), "unreadable")
	forged := good
	forged.Content = []byte(`{"maxHolders":9}`)
	forged.MAC = configNoteMAC(creds, forged)
	data, err = json.Marshal(forged)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	got, _, ok = RecentConfig(dir, target, creds, read.Add(time.Second))
	assert.True(t, ok, "a note made with the key verifies (the key is what the MAC proves)")
	assert.Equal(t, forged.Content, got)
}

// FuzzConfigNote: whatever a step of the job left at the note's path,
// RecentConfig never panics and uses nothing the App's key did not
// authenticate: any change to a note made with the key is refused.
func FuzzConfigNote(f *testing.F) {
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com"}
	creds := AppCredentials{AppID: 12, PrivateKey: []byte("fuzz key")}
	read := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	good := configNote{APIURL: target.APIURL, Repository: target.Repository(), Lock: target.Lock, ReadAt: read, Content: []byte(`{"maxHolders":2}`)}
	good.MAC = configNoteMAC(creds, good)
	valid, err := json.Marshal(good)
	require.NoError(f, err)
	f.Add(valid)
	f.Add([]byte(`{"apiUrl":"https://api.github.com","repository":"acme/build-lock","lock":"seats","readAt":"2026-12-06T10:00:00Z","content":"e30=","mac":"AAAA"}`))
	f.Add([]byte("{not json"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := configNotePath(dir, target)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, data, 0o600))
		content, _, ok := RecentConfig(dir, target, creds, read.Add(time.Second))
		if !ok {
			return
		}
		var n configNote
		require.NoError(t, json.Unmarshal(data, &n))
		assert.Equal(t, configNoteMAC(creds, n), n.MAC, "only an authenticated note is used")
		assert.Equal(t, n.Content, content)
	})
}
