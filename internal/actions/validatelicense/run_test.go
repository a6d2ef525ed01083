package validatelicense_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/validatelicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

const (
	serial   = "SC-SECRETSERIAL-0001"
	email    = "ci@example.com"
	password = "hunter2-secret-password"
)

func run(t *testing.T, env map[string]string) (map[string]string, string, error) {
	t.Helper()
	dir := t.TempDir()
	full := map[string]string{"GITHUB_OUTPUT": filepath.Join(dir, "out")}
	for k, v := range env {
		full[k] = v
	}
	var log bytes.Buffer
	err := validatelicense.Run(context.Background(), actionkit.Deps{Getenv: func(k string) string { return full[k] }, Stdout: &log})
	out, rerr := actionio.ReadFileCommands(full["GITHUB_OUTPUT"])
	require.NoError(t, rerr)
	raw, _ := os.ReadFile(full["GITHUB_OUTPUT"])
	for _, secret := range []string{serial, email, password, "licensing.example.com"} {
		assert.NotContains(t, string(raw), secret, "an output carries a secret")
		if err != nil {
			assert.NotContains(t, err.Error(), secret)
		}
	}
	return out, log.String(), err
}

func TestAllPresent(t *testing.T) {
	out, log, err := run(t, map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": password})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"serial-present": "true", "email-present": "true", "password-present": "true"}, out)
	assert.Contains(t, log, "::add-mask::"+password)
	for _, line := range bytes.Split([]byte(log), []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("::add-mask::")) {
			assert.NotContains(t, string(line), password)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := map[string]struct {
		env    map[string]string
		reason string
		out    map[string]string
	}{
		"missing password": {map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": "  "}, validation.ReasonSecretsMissing,
			map[string]string{"serial-present": "true", "email-present": "true", "password-present": "false"}},
		"nothing": {nil, validation.ReasonSecretsMissing,
			map[string]string{"serial-present": "false", "email-present": "false", "password-present": "false"}},
		"licensing server": {map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": password, "UNITY_LICENSING_SERVER": "https://licensing.example.com"},
			validation.ReasonLicensingServerSet, map[string]string{"serial-present": "true", "email-present": "true", "password-present": "true"}},
		"another mode": {map[string]string{"INPUT_ACTIVATION_MODE": "floating", "UNITY_SERIAL": serial}, validation.ReasonActivationModeUnsupported,
			map[string]string{"serial-present": "true", "email-present": "false", "password-present": "false"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, _, err := run(t, tc.env)
			var le *validation.LicenseError
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, tc.reason, le.Reason)
			assert.Equal(t, tc.out, out, "the booleans are written before the checks")
		})
	}
}

func TestWhitespaceOnlyServerCountsAsUnset(t *testing.T) {
	_, _, err := run(t, map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": password, "UNITY_LICENSING_SERVER": " \n"})
	require.NoError(t, err)
}

func TestMissingOutputFileIsAnError(t *testing.T) {
	err := validatelicense.Run(context.Background(), actionkit.Deps{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}})
	assert.ErrorIs(t, err, actionio.ErrFileCommandUnavailable)
}

// TestTrimmingIsJavaScripts: "present" means non-empty after
// String.prototype.trim, so a value of only U+FEFF is absent and one of
// only U+0085 is present; activation-mode is trimmed the same way, and a
// whitespace-only mode is refused as the reference refuses it (only an
// empty input takes the default).
func TestTrimmingIsJavaScripts(t *testing.T) {
	out, _, err := run(t, map[string]string{"UNITY_SERIAL": "\ufeff", "UNITY_EMAIL": "\u0085", "UNITY_PASSWORD": password})
	var le *validation.LicenseError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, []string{validation.EnvSerial}, le.Missing)
	assert.Equal(t, map[string]string{"serial-present": "false", "email-present": "true", "password-present": "true"}, out)

	all := map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": password}
	with := func(mode string) map[string]string {
		m := map[string]string{"INPUT_ACTIVATION_MODE": mode}
		for k, v := range all {
			m[k] = v
		}
		return m
	}
	_, _, err = run(t, with("\ufeffserial\u2029"))
	require.NoError(t, err)
	for _, mode := range []string{"   ", "\ufeff", "\t\n", "serial\u0085"} {
		_, _, err = run(t, with(mode))
		require.ErrorAs(t, err, &le, "%q", mode)
		assert.Equal(t, validation.ReasonActivationModeUnsupported, le.Reason, "%q", mode)
	}
	_, _, err = run(t, map[string]string{"UNITY_SERIAL": serial, "UNITY_EMAIL": email, "UNITY_PASSWORD": password, "UNITY_LICENSING_SERVER": "\ufeff"})
	require.NoError(t, err, "a licensing server of only U+FEFF is unset")
}
