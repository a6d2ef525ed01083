package lockaction

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// An installation note is the writer App's installation as one step of a
// job looked it up (its id and account), left in RUNNER_TEMP so the job's
// later steps on the same lock repository (release, the post step, a second
// acquire) mint their token from it without looking it up again: one App
// JWT request less per step (issue 23: requests per admitted job). It
// holds no secret: an installation id and an account are public facts, and
// a token can only be minted from them with the App's private key.
type installationNote struct {
	APIURL     string `json:"apiUrl"`
	Repository string `json:"repository"`
	AppID      int64  `json:"appId"`
	ghclient.KnownInstallation
}

// installationNotePath names the note of App appID on t's repository
// under dir (RUNNER_TEMP), or "" without one.
func installationNotePath(dir string, t Target, appID int64) string {
	return notePath(dir, "installation-", ".json", t.APIURL, t.Repository(), strconv.FormatInt(appID, 10))
}

// readInstallationNote returns the installation an earlier step of this
// job looked up for App appID on t's repository. A note for another API,
// repository or App, one without an account, or one whose account is not
// the lock repository's owner (the owner pin would refuse it:
// CheckOwnerPin) is not used: the client then looks the installation up
// and the pin decides on GitHub's answer, never on the note.
func readInstallationNote(dir string, t Target, appID int64) *ghclient.KnownInstallation {
	var n installationNote
	if !readNoteFile(installationNotePath(dir, t, appID), &n) || n.APIURL != t.APIURL || n.Repository != t.Repository() || n.AppID != appID ||
		n.ID <= 0 || n.AccountID <= 0 || !strings.EqualFold(n.AccountLogin, t.Owner) ||
		(t.SameOwner && n.AccountID != t.CallerOwnerID) {
		return nil
	}
	k := n.KnownInstallation
	return &k
}

// RememberInstallation leaves the writer App installation c minted from
// (after CheckOwnerPin accepted its account) for the job's later steps.
// Failing to write it only costs them one lookup, so callers warn and go
// on; a client that has not looked one up writes nothing.
func RememberInstallation(runnerTemp string, t Target, creds AppCredentials, c *ghclient.Client) error {
	p := installationNotePath(runnerTemp, t, creds.AppID)
	k, ok := c.KnownInstallation()
	if p == "" || !ok {
		return nil
	}
	data, err := json.Marshal(installationNote{APIURL: t.APIURL, Repository: t.Repository(), AppID: creds.AppID, KnownInstallation: k})
	if err != nil {
		return err
	}
	return WriteMarkerFile(p, data)
}

// NewJobWriterClient is NewWriterClientWith for a step of a job whose
// earlier step may have left an installation note in runnerTemp
// (RememberInstallation): the client mints from that installation instead
// of looking it up. A mint answered 404 looks it up after all. When that
// step also left the token it minted from that installation
// (RememberToken), the client uses it while it is fresh instead of minting,
// and says so in the log.
func NewJobWriterClient(ctx context.Context, a *actionio.IO, t Target, creds AppCredentials, k Knobs, opts ClientOptions, runnerTemp string) (*ghclient.Client, error) {
	known := readInstallationNote(runnerTemp, t, creds.AppID)
	var noted *ghclient.KnownToken
	if known != nil {
		noted = readTokenNote(runnerTemp, t, creds, known.ID)
	}
	c, err := newWriterClient(ctx, a, t, creds, k, opts, known, noted)
	if err == nil && noted != nil {
		if tok, _, ok := c.InstallationToken(); ok && tok.Token == noted.Token {
			a.Printf("Using the installation token this job's acquire step minted (it expires at %s).", tok.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	return c, err
}
