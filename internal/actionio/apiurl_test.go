package actionio_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// TestAPIURLHonorsTheSelfTestEmulatorOnlyForALocalActionOnLoopback: the
// override CI's self-test uses can never redirect a pinned action's
// credentials, nor point anywhere but this machine.
func TestAPIURLHonorsTheSelfTestEmulatorOnlyForALocalActionOnLoopback(t *testing.T) {
	t.Parallel()
	const api = "https://api.github.com"
	for _, tc := range []struct {
		name, override, actionRepo, want string
	}{
		{"no override", "", "", api},
		{"local action, 127.0.0.1", "http://127.0.0.1:8080", "", "http://127.0.0.1:8080"},
		{"local action, 127.0.0.2", "http://127.0.0.2:1", "", "http://127.0.0.2:1"},
		{"local action, ::1", "http://[::1]:9", "", "http://[::1]:9"},
		{"local action, localhost", "https://localhost:8443/api/v3", "", "https://localhost:8443/api/v3"},
		{"pinned action", "http://127.0.0.1:8080", "owner/repo", api},
		{"not loopback", "http://10.0.0.1:8080", "", api},
		{"a name, not an address", "http://evil.example:8080", "", api},
		{"credentials", "http://user:pw@127.0.0.1:8080", "", api},
		{"another scheme", "file:///etc/passwd", "", api},
	} {
		env := map[string]string{"GITHUB_API_URL": api, actionio.SelfTestAPIURLEnv: tc.override, "BUILD_LOCK_ACTION_REPOSITORY": tc.actionRepo}
		a := actionio.New(func(k string) string { return env[k] }, io.Discard)
		assert.Equal(t, tc.want, a.APIURL(), tc.name)
	}
}
