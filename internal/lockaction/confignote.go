package lockaction

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// A config note is the lock config file as acquire last read it, with the
// time of that read, left in RUNNER_TEMP so the job's release and post
// step clean up with it instead of reading the file again when the read is
// recent: one request less per job (issue 23: requests per admitted job).
// It holds no secret (the config is a reviewed file of the lock repository),
// but it decides how many seats a release may hand on, and every step of
// the job can write RUNNER_TEMP, the build included. So the note is
// authenticated: an HMAC-SHA256 keyed from the writer App's private key
// (HKDF, configNoteKeyInfo), which only the steps that could write the state
// themselves hold. A note whose MAC does not verify is not used.
//
// A config read is a snapshot of a file GitHub may serve from a replica
// seconds old; the note stands for a read younger than ConfigNoteMaxAge. A
// config change therefore reaches a job's release at most that much later
// than it reaches a fresh read, while every new acquire reads it at once
// (docs/divergences.md R13).
type configNote struct {
	APIURL     string    `json:"apiUrl"`
	Repository string    `json:"repository"`
	Lock       string    `json:"lock"`
	ReadAt     time.Time `json:"readAt"`
	Content    []byte    `json:"content"`
	// Response is the client's cached answer to that read (its ETag and
	// body), when it had one: a later step that uses the same token
	// (tokennote.go) seeds its cache with it, so its own read of the file
	// is conditional and costs no primary rate limit when the file has not
	// changed (SeedNotedConfig).
	Response *ghclient.CachedResponse `json:"response,omitempty"`
	// MAC is the HMAC of the note's JSON with MAC empty (configNoteMAC).
	MAC []byte `json:"mac,omitempty"`
}

// configNoteKeyInfo separates the note's key from any other use of the
// App's private key.
const configNoteKeyInfo = "ambiguous-build-lock config note v1"

// configNoteMAC authenticates n (its MAC field ignored) with a key derived
// from the App's private key; nil without a key.
func configNoteMAC(creds AppCredentials, n configNote) []byte {
	if len(creds.PrivateKey) == 0 {
		return nil
	}
	key, err := hkdf.Key(sha256.New, creds.PrivateKey, nil, configNoteKeyInfo, sha256.Size)
	if err != nil {
		return nil
	}
	n.MAC = nil
	data, err := json.Marshal(n)
	if err != nil {
		return nil
	}
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// ConfigNoteMaxAge bounds the age of a config read a later step of the job
// uses in place of its own read (younger than this).
const ConfigNoteMaxAge = time.Minute

// configNotePath names the config note of t's lock under dir (RUNNER_TEMP),
// or "" without one.
func configNotePath(dir string, t Target) string {
	return notePath(dir, "config-", ".json", t.APIURL, t.Repository(), t.Lock)
}

// RememberConfig leaves content, the lock config file as read at readAt,
// for the job's later steps, authenticated with creds' private key.
// Failing to write it only costs them one read, so callers warn and go on;
// without a private key it writes nothing.
func RememberConfig(runnerTemp string, t Target, creds AppCredentials, readAt time.Time, content []byte, resp *ghclient.CachedResponse) error {
	p := configNotePath(runnerTemp, t)
	if p == "" || content == nil || len(creds.PrivateKey) == 0 {
		return nil
	}
	n := configNote{APIURL: t.APIURL, Repository: t.Repository(), Lock: t.Lock, ReadAt: readAt.UTC(), Content: content, Response: resp}
	n.MAC = configNoteMAC(creds, n)
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return WriteMarkerFile(p, data)
}

// SeedNotedConfig seeds st's client with the answer to the config read an
// earlier step of this job noted (RememberConfig), whatever its age, when
// the note's MAC verifies under creds' private key: the step's own config
// read is then conditional, and answered 304 (no primary rate limit) when
// it uses the same token and the file has not changed. The body is only
// ever served after GitHub's 304 for this token, and only from a note the
// App's key authenticated, so a step without the key cannot make a read
// return a config GitHub does not hold.
func SeedNotedConfig(runnerTemp string, t Target, creds AppCredentials, st *store.Store) {
	n, ok := verifiedConfigNote(runnerTemp, t, creds)
	if !ok || n.Response == nil {
		return
	}
	st.SeedConfigResponse(*n.Response)
}

// verifiedConfigNote is the config note of t's lock when it is for this
// API, repository and lock, has content, and its MAC verifies under creds'
// private key.
func verifiedConfigNote(runnerTemp string, t Target, creds AppCredentials) (configNote, bool) {
	var n configNote
	if !readNoteFile(configNotePath(runnerTemp, t), &n) || n.APIURL != t.APIURL || n.Repository != t.Repository() || n.Lock != t.Lock || len(n.Content) == 0 {
		return configNote{}, false
	}
	if want := configNoteMAC(creds, n); want == nil || !hmac.Equal(n.MAC, want) {
		return configNote{}, false
	}
	return n, true
}

// RecentConfig returns the lock config file an earlier step of this job
// read for t's lock and how long ago (now on the same runner's clock), when
// that read is younger than ConfigNoteMaxAge. A note whose MAC does not
// verify under creds' private key, one for another API, lock repository or
// lock, one without content, one from the future or one that old or older
// is not used: the caller reads the file.
func RecentConfig(runnerTemp string, t Target, creds AppCredentials, now time.Time) (content []byte, age time.Duration, ok bool) {
	n, ok := verifiedConfigNote(runnerTemp, t, creds)
	if !ok {
		return nil, 0, false
	}
	age = now.Sub(n.ReadAt)
	if age < 0 || age >= ConfigNoteMaxAge {
		return nil, 0, false
	}
	return n.Content, age, true
}

// NotedConfig is the lock config a cleanup step (release, the post step)
// decides with when an earlier step of its job read the file less than
// ConfigNoteMaxAge before now (RecentConfig): the note decoded as that read
// was, and its age. It is only used when c already knows its installation's
// account (an installation note), so CheckOwnerPin decides before the
// step's first request as it does after a read; ok is false otherwise, and
// the step reads the file.
func NotedConfig(runnerTemp string, t Target, creds AppCredentials, c *ghclient.Client, now time.Time) (snap store.ConfigSnapshot, age time.Duration, ok bool) {
	if _, _, known := c.InstallationAccount(); !known {
		return store.ConfigSnapshot{}, 0, false
	}
	content, age, ok := RecentConfig(runnerTemp, t, creds, now)
	if !ok {
		return store.ConfigSnapshot{}, 0, false
	}
	cfg, warnings := lockstate.DecodeConfig(content)
	return store.ConfigSnapshot{Config: cfg, Warnings: warnings, Content: content}, age, true
}
