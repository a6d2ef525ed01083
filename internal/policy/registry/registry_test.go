package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

const (
	shaA = "1111111111111111111111111111111111111111"
	shaB = "2222222222222222222222222222222222222222"
)

const valid = `{
  "schemaVersion": 1,
  "organization": "acme",
  "approvedLockShas": ["` + shaA + `", "` + shaB + `"],
  "approvedReturnShas": ["` + shaB + `"],
  "repositories": [
    {"repository": "acme/zeta", "defaultBranch": "main", "fork": false, "allowWorkflowDispatch": false},
    {"repository": "acme/Alpha", "defaultBranch": "release/v2", "fork": false, "allowWorkflowDispatch": true}
  ],
  "exceptions": [
    {"repository": "acme/zeta", "path": ".github/workflows/synthetic.yml", "classification": "synthetic", "owner": "octocat", "expiresAt": "2027-01-01T00:00:00Z"}
  ]
}`

func TestDecodeValid(t *testing.T) {
	t.Parallel()
	reg, err := registry.Decode([]byte(valid), registry.DecodeOptions{Organization: "acme"})
	require.NoError(t, err)
	assert.Equal(t, "acme", reg.Organization)
	require.Len(t, reg.Repositories, 2)
	assert.Equal(t, "acme/Alpha", reg.Repositories[0].Repository, "sorted case-insensitively")
	assert.True(t, reg.Repositories[0].AllowWorkflowDispatch)
	row, ok := reg.Lookup("ACME/zeta")
	require.True(t, ok)
	assert.Equal(t, "main", row.DefaultBranch)
	ex := reg.ExceptionsFor("acme/zeta")
	require.Len(t, ex, 1)
	assert.False(t, ex[0].Expired(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)))
	assert.True(t, ex[0].Expired(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)), "expiry is exclusive")
}

func TestEncodeIsCanonicalAndRoundTrips(t *testing.T) {
	t.Parallel()
	reg, err := registry.Decode([]byte(valid), registry.DecodeOptions{})
	require.NoError(t, err)
	out, err := registry.Encode(reg, registry.DecodeOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(out), "}\n"))
	assert.Contains(t, string(out), "\n  \"schemaVersion\": 1,\n")
	back, err := registry.Decode(out, registry.DecodeOptions{})
	require.NoError(t, err)
	assert.Equal(t, reg, back)
	again, err := registry.Encode(back, registry.DecodeOptions{})
	require.NoError(t, err)
	assert.Equal(t, out, again, "encoding is a fixed point")
}

func TestAdd(t *testing.T) {
	t.Parallel()
	reg, err := registry.Decode([]byte(valid), registry.DecodeOptions{})
	require.NoError(t, err)
	next, err := reg.Add(registry.Repository{Repository: "acme/middle", DefaultBranch: "main"}, registry.DecodeOptions{})
	require.NoError(t, err)
	require.Len(t, next.Repositories, 3)
	assert.Equal(t, "acme/middle", next.Repositories[1].Repository)
	assert.Len(t, reg.Repositories, 2, "the original is unchanged")
	_, err = next.Add(registry.Repository{Repository: "ACME/MIDDLE", DefaultBranch: "main"}, registry.DecodeOptions{})
	assert.Equal(t, registry.CodeRepository, registry.CodeOf(err))
	_, err = reg.Add(registry.Repository{Repository: "other/x", DefaultBranch: "main"}, registry.DecodeOptions{})
	assert.Equal(t, registry.CodeRepository, registry.CodeOf(err))
}

func TestDecodeRefusals(t *testing.T) {
	t.Parallel()
	repl := func(old, new string) string {
		require.Contains(t, valid, old)
		return strings.Replace(valid, old, new, 1)
	}
	tests := []struct {
		name string
		doc  string
		opts registry.DecodeOptions
		want registry.Code
	}{
		{"empty", "", registry.DecodeOptions{}, registry.CodeSize},
		{"too large", valid + strings.Repeat(" ", registry.MaxBytes), registry.DecodeOptions{}, registry.CodeSize},
		{"not utf8", "{\"schemaVersion\":1,\"organization\":\"\xff\"}", registry.DecodeOptions{}, registry.CodeSyntax},
		{"array", `[]`, registry.DecodeOptions{}, registry.CodeSyntax},
		{"two values", valid + " {}", registry.DecodeOptions{}, registry.CodeSyntax},
		{"trailing scalar", valid + " 1", registry.DecodeOptions{}, registry.CodeSyntax},
		{"duplicate key", repl(`"schemaVersion": 1,`, `"schemaVersion": 1, "schemaVersion": 1,`), registry.DecodeOptions{}, registry.CodeDuplicateKey},
		{"duplicate nested key", repl(`"fork": false, "allowWorkflowDispatch": false}`, `"fork": false, "fork": true, "allowWorkflowDispatch": false}`), registry.DecodeOptions{}, registry.CodeDuplicateKey},
		{"unknown field", repl(`"schemaVersion": 1,`, `"schemaVersion": 1, "baseline": [],`), registry.DecodeOptions{}, registry.CodeUnknownField},
		{"unknown nested field", repl(`"owner": "octocat",`, `"owner": "octocat", "reason": "x",`), registry.DecodeOptions{}, registry.CodeUnknownField},
		{"schema 2", repl(`"schemaVersion": 1`, `"schemaVersion": 2`), registry.DecodeOptions{}, registry.CodeSchema},
		{"no schema", repl(`"schemaVersion": 1,`, ``), registry.DecodeOptions{}, registry.CodeSchema},
		{"bad organization", repl(`"organization": "acme"`, `"organization": "-acme"`), registry.DecodeOptions{}, registry.CodeOrganization},
		{"other organization", valid, registry.DecodeOptions{Organization: "globex"}, registry.CodeOrganization},
		{"no lock sha", repl(`["`+shaA+`", "`+shaB+`"]`, `[]`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"short sha", repl(`"`+shaA+`", "`, `"1234", "`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"uppercase sha", repl(`"`+shaA+`", "`, `"`+strings.ToUpper("abcdefabcdefabcdefabcdefabcdefabcdefabcd")+`", "`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"padded sha", repl(`"`+shaA+`", "`, `" `+shaA+`", "`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"duplicate sha", repl(`"`+shaA+`", "`+shaB+`"]`, `"`+shaA+`", "`+shaA+`", "`+shaB+`"]`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"return not lock", repl(`"approvedReturnShas": ["`+shaB+`"]`, `"approvedReturnShas": ["3333333333333333333333333333333333333333"]`), registry.DecodeOptions{}, registry.CodeApprovedSha},
		{"no repositories", `{"schemaVersion":1,"organization":"acme","approvedLockShas":["` + shaA + `"],"approvedReturnShas":[],"repositories":[],"exceptions":[]}`, registry.DecodeOptions{}, registry.CodeRepository},
		{"other owner", repl(`"acme/zeta", "defaultBranch"`, `"globex/zeta", "defaultBranch"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"case duplicate", repl(`"acme/Alpha"`, `"acme/ZETA"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"long owner", repl(`"organization": "acme"`, `"organization": "`+strings.Repeat("a", 40)+`"`), registry.DecodeOptions{}, registry.CodeOrganization},
		{"long name", repl(`"acme/zeta", "defaultBranch"`, `"acme/`+strings.Repeat("z", 101)+`", "defaultBranch"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"dot name", repl(`"acme/zeta", "defaultBranch"`, `"acme/..", "defaultBranch"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"bad branch", repl(`"release/v2"`, `"release..v2"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"branch lock suffix", repl(`"release/v2"`, `"release/v2.lock"`), registry.DecodeOptions{}, registry.CodeRepository},
		{"missing fork", repl(`"fork": false, "allowWorkflowDispatch": false}`, `"allowWorkflowDispatch": false}`), registry.DecodeOptions{}, registry.CodeRepository},
		{"exception unregistered", repl(`{"repository": "acme/zeta", "path"`, `{"repository": "acme/other", "path"`), registry.DecodeOptions{}, registry.CodeException},
		{"exception miscased", repl(`{"repository": "acme/zeta", "path"`, `{"repository": "acme/Zeta", "path"`), registry.DecodeOptions{}, registry.CodeException},
		{"exception path", repl(`.github/workflows/synthetic.yml`, `.github/workflows/sub/synthetic.yml`), registry.DecodeOptions{}, registry.CodeException},
		{"exception canary", repl(`"classification": "synthetic"`, `"classification": "controlled-canary"`), registry.DecodeOptions{}, registry.CodeException},
		{"exception static", repl(`"classification": "synthetic"`, `"classification": "non-licensing-static"`), registry.DecodeOptions{}, registry.CodeException},
		{"exception owner", repl(`"owner": "octocat"`, `"owner": ""`), registry.DecodeOptions{}, registry.CodeException},
		{"exception time", repl(`"2027-01-01T00:00:00Z"`, `"next year"`), registry.DecodeOptions{}, registry.CodeException},
		{"duplicate exception", repl(`"expiresAt": "2027-01-01T00:00:00Z"}`, `"expiresAt": "2027-01-01T00:00:00Z"}, {"repository": "acme/zeta", "path": ".github/workflows/synthetic.yml", "classification": "disabled", "owner": "octocat", "expiresAt": "2027-01-01T00:00:00Z"}`), registry.DecodeOptions{}, registry.CodeException},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, err := registry.Decode([]byte(tc.doc), tc.opts)
			require.Error(t, err)
			assert.Nil(t, reg)
			assert.Equal(t, tc.want, registry.CodeOf(err), "%v", err)
			assert.ErrorIs(t, err, registry.ErrInvalid)
		})
	}
}

func TestValidRefName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "release/v2", "feature-x_1", "v1.2"} {
		assert.True(t, registry.ValidRefName(ok), ok)
	}
	for _, bad := range []string{"", "@", "a..b", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, "a@{b", "/a", "a/", "a//b", "a.", ".a", "a/.b", "a.lock", "a\x01"} {
		assert.False(t, registry.ValidRefName(bad), bad)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schemaVersion":1,"schemaVersion":1}`))
	f.Add([]byte(`{"a":{"b":[{"c":1,"c":2}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := registry.Decode(data, registry.DecodeOptions{})
		if err != nil {
			require.NotEmpty(t, registry.CodeOf(err))
			return
		}
		out, err := registry.Encode(reg, registry.DecodeOptions{})
		require.NoError(t, err)
		back, err := registry.Decode(out, registry.DecodeOptions{})
		require.NoError(t, err)
		require.Equal(t, reg, back)
	})
}

// TestCommittedExampleIsCanonical: locks/unity-enrollment-policy.example.json
// decodes and is exactly what Encode writes (what onboarding commits).
func TestCommittedExampleIsCanonical(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "locks", "unity-enrollment-policy.example.json"))
	require.NoError(t, err)
	reg, err := registry.Decode(data, registry.DecodeOptions{Organization: "Ambiguous-Interactive"})
	require.NoError(t, err)
	out, err := registry.Encode(reg, registry.DecodeOptions{})
	require.NoError(t, err)
	assert.Equal(t, string(data), string(out))
}
