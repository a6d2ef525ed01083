package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// TestCheckRequiresWhatTheActionsMustHaveDone: check passes only when every
// step result is what it must be and the emulator committed the state the
// acquires and the release wrote.
func TestCheckRequiresWhatTheActionsMustHaveDone(t *testing.T) {
	t.Parallel()
	em := emulator.New(emulator.Options{Seed: 1})
	em.AddOwner("o", 1, true)
	em.AddRepo("o", "r", 2, "main")
	require.NoError(t, em.CreateBranch("o", "r", "lock-state", "main"))
	srv := httptest.NewServer(em.Handler())
	t.Cleanup(srv.Close)
	env := map[string]string{"GITHUB_REPOSITORY": "o/r", "BUILD_LOCK_SELFTEST_ADMIN_URL": srv.URL + "/_emulator"}
	for _, e := range Expectations {
		env[e[0]] = e[1]
		if e[1] == "" {
			env[e[0]] = "7"
		}
	}
	getenv := func(k string) string { return env[k] }
	var out strings.Builder
	err := check(getenv, &out, srv.Client())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "0 committed versions")
	for i := range 3 {
		_, err := em.PutFile("o", "r", "lock-state", "locks/"+Lock+".json", []byte(strings.Repeat("x", i+1)))
		require.NoError(t, err)
	}
	require.NoError(t, check(getenv, &out, srv.Client()))
	assert.Contains(t, out.String(), "3 state versions")

	env["SELFTEST_RECOVER_OUTCOME"] = "success"
	env["SELFTEST_ACQUIRE_FENCING"] = ""
	err = check(getenv, &out, srv.Client())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `SELFTEST_RECOVER_OUTCOME is "success", want failure`)
	assert.Contains(t, err.Error(), `SELFTEST_ACQUIRE_FENCING is "", want a value`)
	assert.Error(t, run([]string{"nope"}, getenv, &out))
}
