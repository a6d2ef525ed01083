package lockaction

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// TestInstallationNote: what acquire remembers is what a later step of the
// job mints from, and a note that does not match the step's API, lock
// repository or App, lacks its account, or names an account the owner pin
// would refuse is not used (the step looks the installation up and the pin
// decides on GitHub's answer).
func TestInstallationNote(t *testing.T) {
	pemKey := testPEM(t)
	target := Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state", APIURL: "https://api.github.com", SameOwner: true, CallerOwnerID: 7001}
	creds := AppCredentials{AppID: 12, PrivateKey: pemKey}
	known := ghclient.KnownInstallation{ID: 55, AccountLogin: "acme", AccountID: 7001}
	client := func(k *ghclient.KnownInstallation) *ghclient.Client {
		c, err := ghclient.New(context.Background(), ghclient.Config{AppID: creds.AppID, PrivateKey: pemKey, InstallationRepository: target.Repository(), Installation: k})
		require.NoError(t, err)
		return c
	}

	dir := t.TempDir()
	require.NoError(t, RememberInstallation(dir, target, creds, client(nil)), "a client that looked nothing up writes nothing")
	assert.Nil(t, readInstallationNote(dir, target, creds.AppID))
	require.NoError(t, RememberInstallation(dir, target, creds, client(&known)))
	got := readInstallationNote(dir, target, creds.AppID)
	require.NotNil(t, got)
	assert.Equal(t, known, *got)
	assert.Nil(t, readInstallationNote("", target, creds.AppID), "no RUNNER_TEMP, no note")
	assert.Nil(t, readInstallationNote(dir, target, 13), "another App")
	other := target
	other.Repo = "other-lock"
	assert.Nil(t, readInstallationNote(dir, other, creds.AppID), "another lock repository")
	ghes := target
	ghes.APIURL = "https://ghe.example.com/api/v3"
	assert.Nil(t, readInstallationNote(dir, ghes, creds.AppID), "another API")

	path := installationNotePath(dir, target, creds.AppID)
	for name, edit := range map[string]func(*installationNote){
		"no account":            func(n *installationNote) { n.AccountID = 0 },
		"no id":                 func(n *installationNote) { n.ID = 0 },
		"another owner's login": func(n *installationNote) { n.AccountLogin = "evil" },
		"another owner's id":    func(n *installationNote) { n.AccountID = 9 },
		"another repository":    func(n *installationNote) { n.Repository = "acme/other" },
	} {
		n := installationNote{APIURL: target.APIURL, Repository: target.Repository(), AppID: creds.AppID, KnownInstallation: known}
		edit(&n)
		data, err := json.Marshal(n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		assert.Nil(t, readInstallationNote(dir, target, creds.AppID), name)
	}
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	assert.Nil(t, readInstallationNote(dir, target, creds.AppID), "unreadable")
}
