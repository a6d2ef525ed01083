package validation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// TestCheckLicenseTruthTable covers every row: activation mode (empty,
// serial, padded serial, another mode, wrong case) × licensing server set or
// not × each of the eight presence combinations of the three secrets.
func TestCheckLicenseTruthTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		mode                  string
		server, serial, email bool
		password              bool
		reason, missing       string
	}{
		{"", false, false, false, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL,UNITY_PASSWORD"},
		{"", false, false, false, true, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL"},
		{"", false, false, true, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_PASSWORD"},
		{"", false, false, true, true, validation.ReasonSecretsMissing, "UNITY_SERIAL"},
		{"", false, true, false, false, validation.ReasonSecretsMissing, "UNITY_EMAIL,UNITY_PASSWORD"},
		{"", false, true, false, true, validation.ReasonSecretsMissing, "UNITY_EMAIL"},
		{"", false, true, true, false, validation.ReasonSecretsMissing, "UNITY_PASSWORD"},
		{"", false, true, true, true, "", ""},
		{"", true, false, false, false, validation.ReasonLicensingServerSet, ""},
		{"", true, false, false, true, validation.ReasonLicensingServerSet, ""},
		{"", true, false, true, false, validation.ReasonLicensingServerSet, ""},
		{"", true, false, true, true, validation.ReasonLicensingServerSet, ""},
		{"", true, true, false, false, validation.ReasonLicensingServerSet, ""},
		{"", true, true, false, true, validation.ReasonLicensingServerSet, ""},
		{"", true, true, true, false, validation.ReasonLicensingServerSet, ""},
		{"", true, true, true, true, validation.ReasonLicensingServerSet, ""},
		{"serial", false, false, false, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL,UNITY_PASSWORD"},
		{"serial", false, false, false, true, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL"},
		{"serial", false, false, true, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_PASSWORD"},
		{"serial", false, false, true, true, validation.ReasonSecretsMissing, "UNITY_SERIAL"},
		{"serial", false, true, false, false, validation.ReasonSecretsMissing, "UNITY_EMAIL,UNITY_PASSWORD"},
		{"serial", false, true, false, true, validation.ReasonSecretsMissing, "UNITY_EMAIL"},
		{"serial", false, true, true, false, validation.ReasonSecretsMissing, "UNITY_PASSWORD"},
		{"serial", false, true, true, true, "", ""},
		{"serial", true, false, false, false, validation.ReasonLicensingServerSet, ""},
		{"serial", true, false, false, true, validation.ReasonLicensingServerSet, ""},
		{"serial", true, false, true, false, validation.ReasonLicensingServerSet, ""},
		{"serial", true, false, true, true, validation.ReasonLicensingServerSet, ""},
		{"serial", true, true, false, false, validation.ReasonLicensingServerSet, ""},
		{"serial", true, true, false, true, validation.ReasonLicensingServerSet, ""},
		{"serial", true, true, true, false, validation.ReasonLicensingServerSet, ""},
		{"serial", true, true, true, true, validation.ReasonLicensingServerSet, ""},
		{" serial ", false, false, false, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL,UNITY_PASSWORD"},
		{" serial ", false, false, false, true, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_EMAIL"},
		{" serial ", false, false, true, false, validation.ReasonSecretsMissing, "UNITY_SERIAL,UNITY_PASSWORD"},
		{" serial ", false, false, true, true, validation.ReasonSecretsMissing, "UNITY_SERIAL"},
		{" serial ", false, true, false, false, validation.ReasonSecretsMissing, "UNITY_EMAIL,UNITY_PASSWORD"},
		{" serial ", false, true, false, true, validation.ReasonSecretsMissing, "UNITY_EMAIL"},
		{" serial ", false, true, true, false, validation.ReasonSecretsMissing, "UNITY_PASSWORD"},
		{" serial ", false, true, true, true, "", ""},
		{" serial ", true, false, false, false, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, false, false, true, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, false, true, false, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, false, true, true, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, true, false, false, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, true, false, true, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, true, true, false, validation.ReasonLicensingServerSet, ""},
		{" serial ", true, true, true, true, validation.ReasonLicensingServerSet, ""},
		{"oidc", false, false, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, false, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, false, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, false, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, true, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, true, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, true, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", false, true, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, false, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, false, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, false, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, false, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, true, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, true, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, true, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"oidc", true, true, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, false, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, false, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, false, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, false, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, true, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, true, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, true, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", false, true, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, false, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, false, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, false, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, false, true, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, true, false, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, true, false, true, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, true, true, false, validation.ReasonActivationModeUnsupported, ""},
		{"Serial", true, true, true, true, validation.ReasonActivationModeUnsupported, ""},
	}
	require.Len(t, rows, 5*2*8)
	for _, r := range rows {
		err := validation.CheckLicense(r.mode, validation.LicensePresence{Serial: r.serial, Email: r.email, Password: r.password, LicensingServer: r.server})
		if r.reason == "" {
			assert.NoError(t, err, "%+v", r)
			continue
		}
		var le *validation.LicenseError
		require.True(t, errors.As(err, &le), "%+v: %v", r, err)
		assert.Equal(t, r.reason, le.Reason, "%+v", r)
		assert.Equal(t, r.missing, strings.Join(le.Missing, ","), "%+v", r)
		for _, name := range le.Missing {
			assert.Contains(t, le.Error(), name)
		}
	}
}

func TestPresent(t *testing.T) {
	t.Parallel()
	assert.True(t, validation.Present("x"))
	assert.True(t, validation.Present(" x "))
	assert.False(t, validation.Present(""))
	assert.False(t, validation.Present(" \t\r\n"), "whitespace-only counts as unset")
}
