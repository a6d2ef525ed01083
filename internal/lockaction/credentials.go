package lockaction

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Credential environment variables.
const (
	EnvAppID           = "BUILD_LOCK_APP_ID"
	EnvAppPrivateKey   = "BUILD_LOCK_APP_PRIVATE_KEY"
	EnvReaderAppID     = "BUILD_LOCK_READER_APP_ID"
	EnvReaderAppKey    = "BUILD_LOCK_READER_APP_PRIVATE_KEY"
	EnvLegacyToken     = "BUILD_LOCK_TOKEN"
	privateKeyMaskHint = "-----BEGIN"
)

var appIDRE = regexp.MustCompile(`^[1-9][0-9]*$`)

// AppCredentials is a GitHub App id and private key. The key is masked in the
// Actions log as soon as it is read and never appears in errors.
type AppCredentials struct {
	AppID      int64
	PrivateKey []byte
	// Masks are the values to mask in the Actions log (the key, its lines,
	// a refused legacy token) before anything else is printed.
	Masks []string
}

// MaskIn masks every secret of c in a's log.
func (c AppCredentials) MaskIn(a *actionio.IO) {
	for _, m := range c.Masks {
		a.Mask(m)
	}
}

// parseAppCredentials validates an App id (trimmed) and key read from
// idVar and keyVar, and the legacy token: both must be set; one without the
// other, a non-numeric id or an empty key is refused naming the variables,
// never their values. A set BUILD_LOCK_TOKEN is refused. The values to mask
// are returned in Masks whatever the outcome.
func parseAppCredentials(rawID, key, legacy, idVar, keyVar string) (AppCredentials, error) {
	rawID, legacy = strings.TrimSpace(rawID), strings.TrimSpace(legacy)
	var c AppCredentials
	if strings.TrimSpace(key) != "" {
		c.Masks = append(c.Masks, key) // line by line for a multi-line PEM
		if !strings.Contains(key, "\n") && strings.Contains(key, `\n`) {
			// A key stored with literal "\n" separators (spec §3.4) is one
			// line here but many once converted; mask those lines too.
			for _, line := range strings.Split(strings.ReplaceAll(key, `\n`, "\n"), "\n") {
				if line = strings.TrimSpace(line); len(line) > 8 && !strings.HasPrefix(line, privateKeyMaskHint) && !strings.HasPrefix(line, "-----END") {
					c.Masks = append(c.Masks, line)
				}
			}
		}
	}
	if legacy != "" {
		c.Masks = append(c.Masks, legacy)
		return AppCredentials{Masks: c.Masks}, refuse("legacy-token", "%s authentication is not supported; configure %s and %s (a GitHub App)", EnvLegacyToken, EnvAppID, EnvAppPrivateKey)
	}
	switch {
	case rawID == "" && strings.TrimSpace(key) == "":
		return c, refuse("app-credentials", "%s and %s are required (the state-writer GitHub App)", idVar, keyVar)
	case rawID == "" || strings.TrimSpace(key) == "":
		return c, refuse("app-credentials", "%s and %s must be set together", idVar, keyVar)
	case !appIDRE.MatchString(rawID):
		return c, refuse("app-id", "%s must be a positive decimal App id", idVar)
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		return c, refuse("app-id", "%s is out of range", idVar)
	}
	c.AppID, c.PrivateKey = id, []byte(key)
	return c, nil
}

// ClientOptions are the injectable edges of a lock action's GitHub client.
type ClientOptions struct {
	Clock  clock.Clock
	Jitter func() float64
	// Transport overrides the base HTTP transport (tests, the emulator).
	Transport ghTransport
}

// NewWriterClientWith returns the state-writer client: an installation
// token for the lock repository only, with contents: write (spec §3.4), the
// retry knobs parsed from BUILD_LOCK_API_* (their warnings about ignored
// values printed now, when the client they tune is built), retry warnings
// and token masking routed to the Actions log.
func NewWriterClientWith(ctx context.Context, a *actionio.IO, t Target, creds AppCredentials, k Knobs, opts ClientOptions) (*ghclient.Client, error) {
	return newWriterClient(ctx, a, t, creds, k, opts, nil, nil)
}

// newWriterClient is NewWriterClientWith minting from known, when set,
// without a lookup first, and using token, when set with known, while it is
// fresh instead of minting.
func newWriterClient(ctx context.Context, a *actionio.IO, t Target, creds AppCredentials, k Knobs, opts ClientOptions, known *ghclient.KnownInstallation, token *ghclient.KnownToken) (*ghclient.Client, error) {
	knobs := k.API
	for _, w := range k.Warnings {
		a.Warning(w)
	}
	return ghclient.New(ctx, ghclient.Config{
		APIURL:                 t.APIURL,
		AppID:                  creds.AppID,
		PrivateKey:             creds.PrivateKey,
		InstallationRepository: t.Repository(),
		Installation:           known,
		InstallationToken:      token,
		TokenRepositories:      []string{t.Repo},
		Permissions:            &github.InstallationPermissions{Contents: github.String("write")},
		Transport:              opts.Transport,
		Clock:                  opts.Clock,
		Jitter:                 opts.Jitter,
		Knobs:                  knobs,
		Warn:                   a.Warning,
		Mask:                   a.Mask,
		// Attempt-bounded calls (acquire's wait loop, post cleanup, operator
		// recovery) have no phase deadline: bound each attempt in flight.
		AttemptTimeout: ghclient.AttemptTimeout,
	})
}

// NewStore returns the compare-and-swap store of the target lock.
func NewStore(c *ghclient.Client, t Target, opts ClientOptions, budget ghclient.Budget) (*store.Store, error) {
	return store.New(store.Options{
		Client: c, Owner: t.Owner, Repo: t.Repo, Branch: t.Branch, Lock: t.Lock, ServerURL: t.ServerURL,
		Clock: opts.Clock, Jitter: opts.Jitter, Budget: budget,
	})
}
