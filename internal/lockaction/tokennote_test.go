package lockaction

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// testPEM is an RSA private key in PEM, as an App's.
func testPEM(t testing.TB) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// TestTokenNote: the token acquire holds is what a later step of the job
// gets back, and nothing of it is readable in the note without the App's
// private key; a note for another API, lock repository, App or
// installation, one sealed under another key, and one whose expiry,
// installation or sealed token was edited is not used (the step mints).
func TestTokenNote(t *testing.T) {
	pemKey := testPEM(t)
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com"}
	creds := AppCredentials{AppID: 12, PrivateKey: pemKey}
	known := ghclient.KnownInstallation{ID: 55, AccountLogin: "acme", AccountID: 7001}
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	minted := ghclient.KnownToken{Token: "ghs_jobToken0123456789", ExpiresAt: now.Add(50 * time.Minute)}
	client := func(k *ghclient.KnownInstallation, tok *ghclient.KnownToken) *ghclient.Client {
		c, err := ghclient.New(context.Background(), ghclient.Config{AppID: creds.AppID, PrivateKey: pemKey,
			InstallationRepository: target.Repository(), Installation: k, InstallationToken: tok, Clock: clock.NewFake(now)})
		require.NoError(t, err)
		return c
	}

	dir := t.TempDir()
	require.NoError(t, RememberToken(dir, target, creds, client(&known, nil)), "a client that minted nothing writes nothing")
	assert.Nil(t, readTokenNote(dir, target, creds, known.ID))
	stale := ghclient.KnownToken{Token: minted.Token, ExpiresAt: now.Add(ghclient.TokenRefreshMargin)}
	require.NoError(t, RememberToken(dir, target, creds, client(&known, &stale)), "a token about to expire is not noted")
	assert.Nil(t, readTokenNote(dir, target, creds, known.ID))
	require.NoError(t, RememberToken(dir, target, AppCredentials{AppID: 12}, client(&known, &minted)), "no key, no note")
	assert.Nil(t, readTokenNote(dir, target, creds, known.ID))

	require.NoError(t, RememberToken(dir, target, creds, client(&known, &minted)))
	got := readTokenNote(dir, target, creds, known.ID)
	require.NotNil(t, got)
	assert.Equal(t, minted.Token, got.Token)
	assert.True(t, minted.ExpiresAt.Equal(got.ExpiresAt))

	path := tokenNotePath(dir, target, creds.AppID)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.False(t, bytes.Contains(data, []byte(minted.Token)), "the token is sealed")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "readable by the runner's user only")

	assert.Nil(t, readTokenNote("", target, creds, known.ID), "no RUNNER_TEMP, no note")
	assert.Nil(t, readTokenNote(dir, target, creds, 56), "another installation")
	assert.Nil(t, readTokenNote(dir, target, AppCredentials{AppID: 12, PrivateKey: testPEM(t)}, known.ID), "another App key")
	assert.Nil(t, readTokenNote(dir, target, AppCredentials{AppID: 12}, known.ID), "no key to open it with")
	for name, edit := range map[string]func(*Target){
		"another API":             func(t *Target) { t.APIURL = "https://ghe.example.com/api/v3" },
		"another lock repository": func(t *Target) { t.Repo = "other-lock" },
	} {
		other := target
		edit(&other)
		assert.Nil(t, readTokenNote(dir, other, creds, known.ID), name)
	}

	var good tokenNote
	require.NoError(t, json.Unmarshal(data, &good))
	for name, edit := range map[string]func(*tokenNote){
		"a later expiry":       func(n *tokenNote) { n.ExpiresAt = n.ExpiresAt.Add(time.Hour) },
		"another installation": func(n *tokenNote) { n.InstallationID = 56 },
		"another repository":   func(n *tokenNote) { n.Repository = "acme/other" },
		"a flipped bit":        func(n *tokenNote) { n.Sealed = append([]byte(nil), n.Sealed...); n.Sealed[0] ^= 1 },
		"no nonce":             func(n *tokenNote) { n.Nonce = nil },
		"no expiry":            func(n *tokenNote) { n.ExpiresAt = time.Time{} },
	} {
		n := good
		edit(&n)
		data, err := json.Marshal(n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		inst := known.ID
		if name == "another installation" {
			inst = 56 // the note names 56 now; it still does not open
		}
		assert.Nil(t, readTokenNote(dir, target, creds, inst), name)
	}
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	assert.Nil(t, readTokenNote(dir, target, creds, known.ID), "unreadable")
}

// FuzzTokenNote: whatever a step leaves at the token note's path,
// readTokenNote never panics and returns a token only from a note sealed
// under the App's key.
func FuzzTokenNote(f *testing.F) {
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com"}
	// The key is only HKDF input here, so any bytes stand in for a PEM.
	creds := AppCredentials{AppID: 12, PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nkey one\n-----END RSA PRIVATE KEY-----\n")}
	good, err := sealTokenNote(target, creds, 55, ghclient.KnownToken{Token: "ghs_seed", ExpiresAt: time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC)})
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"apiUrl":"https://api.github.com","repository":"acme/build-lock","appId":12,"installationId":55,"expiresAt":"2026-12-06T11:00:00Z","nonce":"AAAAAAAAAAAAAAAA","sealed":"Z2hzX2ZvcmdlZA=="}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := tokenNotePath(dir, target, creds.AppID)
		require.NoError(t, WriteMarkerFile(path, data))
		got := readTokenNote(dir, target, creds, 55)
		if got == nil {
			return
		}
		// Only a note that opened under the key yields a token: the seed
		// itself (or the same sealed bytes in another JSON spelling).
		assert.Equal(t, "ghs_seed", got.Token)
	})
}
