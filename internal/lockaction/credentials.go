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
}

// ParseAppCredentials reads an App id and key from the two environment
// variables. Both must be set; one without the other, a non-numeric id or an
// empty key is refused naming the variables, never their values. The legacy
// BUILD_LOCK_TOKEN is refused.
func ParseAppCredentials(a *actionio.IO, idVar, keyVar string) (AppCredentials, error) {
	rawID := strings.TrimSpace(a.Getenv(idVar))
	key := a.Getenv(keyVar)
	if strings.TrimSpace(key) != "" {
		a.Mask(key) // line by line for a multi-line PEM
		if !strings.Contains(key, "\n") && strings.Contains(key, `\n`) {
			// A key stored with literal "\n" separators (spec §3.4) is one
			// line here but many once converted; mask those lines too.
			for _, line := range strings.Split(strings.ReplaceAll(key, `\n`, "\n"), "\n") {
				if line = strings.TrimSpace(line); len(line) > 8 && !strings.HasPrefix(line, privateKeyMaskHint) && !strings.HasPrefix(line, "-----END") {
					a.Mask(line)
				}
			}
		}
	}
	if legacy := strings.TrimSpace(a.Getenv(EnvLegacyToken)); legacy != "" {
		a.Mask(legacy)
		return AppCredentials{}, refuse("legacy-token", "%s authentication is not supported; configure %s and %s (a GitHub App)", EnvLegacyToken, EnvAppID, EnvAppPrivateKey)
	}
	switch {
	case rawID == "" && strings.TrimSpace(key) == "":
		return AppCredentials{}, refuse("app-credentials", "%s and %s are required (the state-writer GitHub App)", idVar, keyVar)
	case rawID == "" || strings.TrimSpace(key) == "":
		return AppCredentials{}, refuse("app-credentials", "%s and %s must be set together", idVar, keyVar)
	case !appIDRE.MatchString(rawID):
		return AppCredentials{}, refuse("app-id", "%s must be a positive decimal App id", idVar)
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		return AppCredentials{}, refuse("app-id", "%s is out of range", idVar)
	}
	return AppCredentials{AppID: id, PrivateKey: []byte(key)}, nil
}

// ClientOptions are the injectable edges of a lock action's GitHub client.
type ClientOptions struct {
	Clock  clock.Clock
	Jitter func() float64
	// Transport overrides the base HTTP transport (tests, the emulator).
	Transport ghTransport
}

// NewWriterClient returns the state-writer client: an installation token for
// the lock repository only, with contents: write (spec §3.4), retry knobs
// from BUILD_LOCK_API_* (invalid values reported and ignored), retry warnings
// and token masking routed to the Actions log.
func NewWriterClient(ctx context.Context, a *actionio.IO, t Target, creds AppCredentials, opts ClientOptions) (*ghclient.Client, error) {
	knobs, warnings := ghclient.KnobsFromEnv(a.Getenv)
	for _, w := range warnings {
		a.Warning(w)
	}
	return ghclient.New(ctx, ghclient.Config{
		APIURL:                 t.APIURL,
		AppID:                  creds.AppID,
		PrivateKey:             creds.PrivateKey,
		InstallationRepository: t.Repository(),
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
