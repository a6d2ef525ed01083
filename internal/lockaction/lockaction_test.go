package lockaction_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func io(env map[string]string) (*actionio.IO, *bytes.Buffer) {
	var out bytes.Buffer
	return actionio.New(func(k string) string { return env[k] }, &out), &out
}

func baseEnv() map[string]string {
	return map[string]string{
		"INPUT_LOCK-NAME":            "seats",
		"GITHUB_ACTION_REPOSITORY":   "acme/build-lock",
		"GITHUB_REPOSITORY":          "acme/game",
		"GITHUB_REPOSITORY_ID":       "42",
		"GITHUB_REPOSITORY_OWNER_ID": "7",
		"GITHUB_RUN_ID":              "1001",
		"GITHUB_RUN_ATTEMPT":         "2",
		"GITHUB_JOB":                 "build",
		"GITHUB_WORKFLOW":            "CI",
		"GITHUB_SERVER_URL":          "https://github.com",
		"GITHUB_API_URL":             "https://api.github.com",
	}
}

func TestParseTargetDefaultsToTheActionRepository(t *testing.T) {
	t.Parallel()
	a, _ := io(baseEnv())
	tg, err := parseTarget(a, lockaction.Policy{})
	require.NoError(t, err)
	assert.Equal(t, lockaction.Target{Owner: "acme", Repo: "build-lock", Lock: "seats", Branch: "lock-state",
		APIURL: "https://api.github.com", ServerURL: "https://github.com", CallerOwnerID: 7, CallerRepoID: 42, SameOwner: true}, tg)
}

// The lock repository's source, in order (docs/packaging.md "Lock
// repository"): the input, BUILD_LOCK_ACTION_REPOSITORY (composite steps),
// GITHUB_ACTION_REPOSITORY (node24), and for a local uses: ./ the calling
// repository itself.
func TestParseTargetLockRepositorySources(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		set  map[string]string
		want string
	}{
		"input wins":                           {map[string]string{"INPUT_LOCK-REPOSITORY": "acme/locks", "BUILD_LOCK_ACTION_REPOSITORY": "acme/composite"}, "locks"},
		"composite env before runner's":        {map[string]string{"BUILD_LOCK_ACTION_REPOSITORY": "acme/composite"}, "composite"},
		"runner's action repository":           {nil, "build-lock"},
		"local uses: falls back to the caller": {map[string]string{"GITHUB_ACTION_REPOSITORY": ""}, "game"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := baseEnv()
			for k, v := range tc.set {
				env[k] = v
			}
			a, _ := io(env)
			tg, err := parseTarget(a, lockaction.Policy{})
			require.NoError(t, err)
			assert.Equal(t, "acme", tg.Owner)
			assert.Equal(t, tc.want, tg.Repo)
		})
	}
}

func TestParseTargetRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		set  map[string]string
		pol  lockaction.Policy
		rule string
	}{
		"lock name pattern":            {map[string]string{"INPUT_LOCK-NAME": "a/b"}, lockaction.Policy{}, "lock-name-pattern"},
		"lock name dot-dot":            {map[string]string{"INPUT_LOCK-NAME": "a..b"}, lockaction.Policy{}, "lock-name-pattern"},
		"lock repository":              {map[string]string{"INPUT_LOCK-REPOSITORY": "acme"}, lockaction.Policy{}, "lock-repository-pattern"},
		"dot segment":                  {map[string]string{"INPUT_LOCK-REPOSITORY": "acme/.."}, lockaction.Policy{}, "lock-repository-pattern"},
		"state branch":                 {map[string]string{"INPUT_STATE-BRANCH": "../x"}, lockaction.Policy{}, "state-branch-pattern"},
		"state branch .lock":           {map[string]string{"INPUT_STATE-BRANCH": "x.lock"}, lockaction.Policy{}, "state-branch-pattern"},
		"state branch refs/heads/main": {map[string]string{"INPUT_STATE-BRANCH": "refs/heads/main"}, lockaction.Policy{}, "state-branch-ambiguous"},
		"state branch heads/main":      {map[string]string{"INPUT_STATE-BRANCH": "heads/main"}, lockaction.Policy{}, "state-branch-ambiguous"},
		"state branch tags/v1":         {map[string]string{"INPUT_STATE-BRANCH": "tags/v1"}, lockaction.Policy{}, "state-branch-ambiguous"},
		"state branch HEAD":            {map[string]string{"INPUT_STATE-BRANCH": "HEAD"}, lockaction.Policy{}, "state-branch-ambiguous"},
		"state branch commit id":       {map[string]string{"INPUT_STATE-BRANCH": "0123456789abcdef0123456789abcdef01234567"}, lockaction.Policy{}, "state-branch-ambiguous"},
		"foreign owner":                {map[string]string{"GITHUB_REPOSITORY": "evil/game"}, lockaction.Policy{}, "caller-owner"},
		"owner id pinned":              {nil, lockaction.Policy{OwnerID: 8}, "caller-owner-id"},
		"missing repository id":        {map[string]string{"GITHUB_REPOSITORY_ID": ""}, lockaction.Policy{}, "caller-ids"},
		"non-canonical id":             {map[string]string{"GITHUB_REPOSITORY_OWNER_ID": "07"}, lockaction.Policy{}, "caller-ids"},
		"server url with path":         {map[string]string{"GITHUB_SERVER_URL": "https://github.com/x"}, lockaction.Policy{}, "runner-url"},
		"api url credentials":          {map[string]string{"GITHUB_API_URL": "https://u:p@api.github.com"}, lockaction.Policy{}, "runner-url"},
		"not in allowed repos":         {nil, lockaction.Policy{AllowedRepositories: []lockaction.AllowedRepository{{Repository: "acme/other", ID: 42}}}, "caller-not-allowed"},
		"allowed owner wrong id": {map[string]string{"GITHUB_REPOSITORY": "partner/game"},
			lockaction.Policy{AllowedOwners: []lockaction.AllowedOwner{{Login: "partner", ID: 99}}}, "caller-owner"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := baseEnv()
			for k, v := range tc.set {
				env[k] = v
			}
			a, _ := io(env)
			_, err := parseTarget(a, tc.pol)
			var re *lockaction.RefusalError
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Equal(t, tc.rule, re.Rule)
		})
	}
}

func TestParseTargetAllowsPolicyOwners(t *testing.T) {
	t.Parallel()
	env := baseEnv()
	env["GITHUB_REPOSITORY"] = "partner/game"
	a, _ := io(env)
	_, err := parseTarget(a, lockaction.Policy{AllowedOwners: []lockaction.AllowedOwner{{Login: "partner", ID: 7}}})
	require.NoError(t, err)
}

func TestLoadPolicyFromTheActionCheckout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".github", "actions", "acquire-build-lock"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "locks"), 0o755))
	env := baseEnv()
	env["GITHUB_ACTION_PATH"] = filepath.Join(root, ".github", "actions", "acquire-build-lock")
	a, _ := io(env)
	p, err := loadPolicy(a)
	require.NoError(t, err)
	assert.Equal(t, lockaction.Policy{}, p, "no file: same-owner only")

	require.NoError(t, os.WriteFile(filepath.Join(root, "locks", "policy.json"), []byte(`{"ownerId":7,"allowedOwners":[{"login":"partner","id":9}]}`), 0o644))
	p, err = loadPolicy(a)
	require.NoError(t, err)
	assert.Equal(t, int64(7), p.OwnerID)
	require.Len(t, p.AllowedOwners, 1)

	require.NoError(t, os.WriteFile(filepath.Join(root, "locks", "policy.json"), []byte(`{"allowEveryone":true}`), 0o644))
	_, err = loadPolicy(a)
	var re *lockaction.RefusalError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "policy-malformed", re.Rule)

	// A repeated key would silently keep the last value (here: a foreign
	// owner id); a reviewed file that says two things is refused.
	require.NoError(t, os.WriteFile(filepath.Join(root, "locks", "policy.json"), []byte(`{"ownerId":7,"ownerId":8}`), 0o644))
	_, err = loadPolicy(a)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "policy-malformed", re.Rule)
	assert.Contains(t, err.Error(), "duplicate-key at $.ownerId")
}

func TestIdentityExcludesTheRunAttempt(t *testing.T) {
	t.Parallel()
	a, _ := io(baseEnv())
	tg, err := parseTarget(a, lockaction.Policy{})
	require.NoError(t, err)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	id := identity(a, tg, "unity-6", " runner-1 ", "", now)
	assert.Equal(t, "acme/game:1001:build:unity-6", id.HolderID)
	assert.Equal(t, "2", id.RunAttempt)
	assert.Equal(t, "runner-1", id.RunnerID)
	assert.Equal(t, "https://github.com/acme/game/actions/runs/1001", id.RunURL)
	assert.Equal(t, now, id.QueuedAt)
}

func TestParseAppCredentials(t *testing.T) {
	t.Parallel()
	const key = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecretmaterialline\\n-----END RSA PRIVATE KEY-----"
	cases := map[string]struct {
		id, key, legacy string
		rule            string
	}{
		"both missing":   {"", "", "", "app-credentials"},
		"key missing":    {"12", "", "", "app-credentials"},
		"id missing":     {"", key, "", "app-credentials"},
		"id not numeric": {"abc", key, "", "app-id"},
		"legacy token":   {"12", key, "legacy", "legacy-token"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{lockaction.EnvAppID: tc.id, lockaction.EnvAppPrivateKey: tc.key, lockaction.EnvLegacyToken: tc.legacy}
			a, out := io(env)
			_, err := parseAppCredentials(a, lockaction.EnvAppID, lockaction.EnvAppPrivateKey)
			var re *lockaction.RefusalError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.rule, re.Rule)
			assert.NotContains(t, err.Error(), "secretmaterial")
			assert.NotContains(t, err.Error(), "ghp_legacyvalue")
			if tc.key != "" {
				assert.Contains(t, out.String(), "::add-mask::", "the key is masked as soon as it is read")
			}
		})
	}
	env := map[string]string{lockaction.EnvAppID: "12", lockaction.EnvAppPrivateKey: key}
	a, out := io(env)
	c, err := parseAppCredentials(a, lockaction.EnvAppID, lockaction.EnvAppPrivateKey)
	require.NoError(t, err)
	assert.Equal(t, int64(12), c.AppID)
	assert.True(t, strings.Contains(out.String(), "::add-mask::MIIEsecretmaterialline"), out.String())
}
