package reap

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// readerClients builds one reader client per consumer owner: an App token
// for that owner's installation with actions: read and metadata: read only.
type readerClients struct {
	a     *actionio.IO
	d     Deps
	t     lockaction.Target
	creds lockaction.AppCredentials
	knobs ghclient.Knobs

	mu      sync.Mutex
	byOwner map[string]*ghclient.Client
}

func (rc *readerClients) get(ctx context.Context, owner string) (*ghclient.Client, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	key := strings.ToLower(owner)
	if c, ok := rc.byOwner[key]; ok {
		return c, nil
	}
	c, err := ghclient.New(ctx, ghclient.Config{
		APIURL:            rc.t.APIURL,
		AppID:             rc.creds.AppID,
		PrivateKey:        rc.creds.PrivateKey,
		InstallationOwner: owner,
		Permissions:       &github.InstallationPermissions{Actions: github.String("read"), Metadata: github.String("read")},
		Transport:         rc.d.Transport,
		Clock:             rc.d.Clock,
		Jitter:            rc.d.Jitter,
		Knobs:             rc.knobs,
		Warn:              rc.a.Warning,
		Mask:              rc.a.Mask,
	})
	if err != nil {
		return nil, fmt.Errorf("build the reader client for %s: %w", owner, err)
	}
	rc.byOwner[key] = c
	return c, nil
}
