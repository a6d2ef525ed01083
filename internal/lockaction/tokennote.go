package lockaction

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// A token note is the installation token acquire minted for the lock
// repository, left in RUNNER_TEMP so the job's release and post step use it
// instead of minting their own while it is fresh: one App JWT request less
// per job (issue 23: requests per admitted job; divergences R14).
//
// The token is a secret (contents: write on the lock repository until it
// expires, at most an hour after it was minted) and every step of the job
// can read RUNNER_TEMP, the build included. So the note carries it sealed
// with AES-256-GCM under a key derived (HKDF-SHA256, tokenNoteKeyInfo) from
// the writer App's private key, which only the steps that could mint such a
// token themselves hold; the note's other fields are the additional data, so
// a note moved to another API, repository, App or installation, or with an
// edited expiry, does not open. A note that does not open is not used.
// RUNNER_TEMP is emptied when the job ends.
type tokenNote struct {
	APIURL         string    `json:"apiUrl"`
	Repository     string    `json:"repository"`
	AppID          int64     `json:"appId"`
	InstallationID int64     `json:"installationId"`
	ExpiresAt      time.Time `json:"expiresAt"`
	// Nonce and Sealed are the GCM nonce and the sealed token; they are
	// left out of the additional data (tokenNoteAAD).
	Nonce  []byte `json:"nonce,omitempty"`
	Sealed []byte `json:"sealed,omitempty"`
}

// tokenNoteKeyInfo separates the note's key from any other use of the App's
// private key (the config note's MAC key among them).
const tokenNoteKeyInfo = "ambiguous-build-lock token note v1"

// tokenNoteAEAD is the note's AES-256-GCM keyed from creds' private key.
func tokenNoteAEAD(creds AppCredentials) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, creds.PrivateKey, nil, tokenNoteKeyInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// tokenNoteAAD is the note's JSON without its nonce and sealed token.
func tokenNoteAAD(n tokenNote) ([]byte, error) {
	n.Nonce, n.Sealed = nil, nil
	return json.Marshal(n)
}

// tokenNotePath names the token note of App appID on t's repository under
// dir (RUNNER_TEMP), or "" without one.
func tokenNotePath(dir string, t Target, appID int64) string {
	return notePath(dir, "token-", ".json", t.APIURL, t.Repository(), strconv.FormatInt(appID, 10))
}

// RememberToken leaves the fresh installation token c holds for the job's
// later steps, sealed under a key derived from creds' private key.
// Failing to write it only costs them one mint, so callers warn and go on;
// a client without a fresh token, or credentials without a key, write
// nothing.
func RememberToken(runnerTemp string, t Target, creds AppCredentials, c *ghclient.Client) error {
	p := tokenNotePath(runnerTemp, t, creds.AppID)
	tok, inst, ok := c.InstallationToken()
	if p == "" || !ok || len(creds.PrivateKey) == 0 {
		return nil
	}
	data, err := sealTokenNote(t, creds, inst.ID, tok)
	if err != nil {
		return err
	}
	return WriteMarkerFile(p, data)
}

// sealTokenNote is the note of tok, minted from installation installID of
// App creds.AppID for t's repository, sealed under creds' private key.
func sealTokenNote(t Target, creds AppCredentials, installID int64, tok ghclient.KnownToken) ([]byte, error) {
	aead, err := tokenNoteAEAD(creds)
	if err != nil {
		return nil, err
	}
	n := tokenNote{APIURL: t.APIURL, Repository: t.Repository(), AppID: creds.AppID, InstallationID: installID, ExpiresAt: tok.ExpiresAt.UTC()}
	aad, err := tokenNoteAAD(n)
	if err != nil {
		return nil, err
	}
	n.Nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(n.Nonce); err != nil {
		return nil, err
	}
	n.Sealed = aead.Seal(nil, n.Nonce, []byte(tok.Token), aad)
	return json.Marshal(n)
}

// readTokenNote returns the token an earlier step of this job minted from
// installation installID of App creds.AppID for t's repository, with its
// expiry. A note for another API, repository, App or installation, or one
// that does not open under creds' private key (edited, or sealed by another
// key), is not used: nil, and the client mints. Whether the token is still
// fresh is the client's to decide (ghclient.Config.InstallationToken).
func readTokenNote(dir string, t Target, creds AppCredentials, installID int64) *ghclient.KnownToken {
	var n tokenNote
	if installID <= 0 || len(creds.PrivateKey) == 0 || !readNoteFile(tokenNotePath(dir, t, creds.AppID), &n) ||
		n.APIURL != t.APIURL || n.Repository != t.Repository() || n.AppID != creds.AppID || n.InstallationID != installID ||
		n.ExpiresAt.IsZero() {
		return nil
	}
	aead, err := tokenNoteAEAD(creds)
	if err != nil || len(n.Nonce) != aead.NonceSize() {
		return nil
	}
	aad, err := tokenNoteAAD(n)
	if err != nil {
		return nil
	}
	tok, err := aead.Open(nil, n.Nonce, n.Sealed, aad)
	if err != nil || len(tok) == 0 {
		return nil
	}
	return &ghclient.KnownToken{Token: string(tok), ExpiresAt: n.ExpiresAt}
}
