package enroll_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
)

func bigArtifact(repos, findings int) *enroll.Artifact {
	a := &enroll.Artifact{SchemaVersion: 1, LockRepository: lockRepo, Complete: true}
	for r := 0; r < repos; r++ {
		name := fmt.Sprintf("%s/game-%02d", org, r)
		sha := strings.Repeat(fmt.Sprintf("%x", r%16), 40)
		a.Repositories = append(a.Repositories, enroll.RepositoryRow{Repository: name, SHA: sha})
		for j := 0; j < 20; j++ {
			a.Inventory = append(a.Inventory, enroll.InventoryRow{Repository: name, SHA: sha, Path: unityPath, Job: fmt.Sprintf("job-%d", j), Classification: policy.NonLicensingStatic})
		}
	}
	for i := 0; i < findings; i++ {
		a.Findings = append(a.Findings, enroll.FindingRow{Repository: a.Repositories[i%repos].Repository, SHA: a.Repositories[i%repos].SHA,
			Code: policy.MutableActionRef, Path: fmt.Sprintf(".github/workflows/w%04d.yml", i), Job: "build", Line: i + 1})
	}
	return a
}

func TestRenderBodyIsBounded(t *testing.T) {
	t.Parallel()
	a := bigArtifact(64, 4096)
	body := enroll.RenderBody(a, artifactURL, "")
	assert.LessOrEqual(t, len(body), enroll.MaxBodyBytes)
	assert.True(t, strings.HasPrefix(body, enroll.Marker+"\n"))
	assert.Contains(t, body, "**4096 findings**")
	assert.Contains(t, body, "_4056 more findings omitted; the artifact has all of them._")
	assert.Contains(t, body, "_1264 more inventory rows omitted")
	assert.Equal(t, enroll.PreviewFindings, strings.Count(body, "`mutable-action-ref`"))
	assert.Equal(t, body, enroll.RenderBody(a, artifactURL, ""), "deterministic")
}

func TestDecodeArtifactIsStrict(t *testing.T) {
	t.Parallel()
	a := bigArtifact(2, 3)
	data, err := a.Encode()
	require.NoError(t, err)
	back, err := enroll.DecodeArtifact(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, a, back)
	good := string(data)
	for name, doc := range map[string]string{
		"unknown field":   strings.Replace(good, `"complete": true,`, `"complete": true, "extra": 1,`, 1),
		"two values":      good + "{}",
		"bad code":        strings.Replace(good, `"mutable-action-ref"`, `"made-up"`, 1),
		"bad class":       strings.Replace(good, `"non-licensing-static"`, `"paid"`, 1),
		"markdown path":   strings.Replace(good, `".github/workflows/w0000.yml"`, `"[x](https://evil)"`, 1),
		"bad sha":         strings.Replace(good, `"sha": "0000000000000000000000000000000000000000"`, `"sha": "zz"`, 1),
		"bad repository":  strings.Replace(good, `"acme/game-00"`, `"acme/game 00"`, 1),
		"incomplete lies": strings.Replace(good, `"mutable-action-ref"`, `"repository-retrieval-incomplete"`, 1),
		"schema":          strings.Replace(good, `"schemaVersion": 1`, `"schemaVersion": 2`, 1),
		"too large":       good + strings.Repeat(" ", enroll.MaxArtifactBytes),
	} {
		_, err := enroll.DecodeArtifact(strings.NewReader(doc))
		assert.Error(t, err, name)
	}
}

func TestValidateArtifactURL(t *testing.T) {
	t.Parallel()
	got, err := enroll.ValidateArtifactURL(artifactURL, "https://github.com", lockRepo, runID)
	require.NoError(t, err)
	assert.Equal(t, artifactURL, got)
	_, err = enroll.ValidateArtifactURL("https://ghe.example.com/"+lockRepo+"/actions/runs/42/artifacts/7", "https://ghe.example.com", lockRepo, runID)
	assert.NoError(t, err, "GitHub Enterprise Server: the server's own host")
	_, err = enroll.ValidateArtifactURL(artifactURL, "https://ghe.example.com", lockRepo, runID)
	assert.ErrorIs(t, err, enroll.ErrArtifactURL)
	_, err = enroll.ValidateArtifactURL("https://github.com/"+lockRepo+"/actions/runs/42/artifacts/7%2F..", "https://github.com", lockRepo, runID)
	assert.ErrorIs(t, err, enroll.ErrArtifactURL)
}

func FuzzDecodeArtifact(f *testing.F) {
	data, err := bigArtifact(2, 2).Encode()
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`{"schemaVersion":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := enroll.DecodeArtifact(bytes.NewReader(b))
		if err != nil {
			return
		}
		body := enroll.RenderBody(a, artifactURL, "")
		require.LessOrEqual(t, len(body), enroll.MaxBodyBytes)
		require.True(t, strings.HasPrefix(body, enroll.Marker))
	})
}
