package ghclient

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestKnobsFromValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		env      map[string]string
		want     Knobs
		warnings []string
	}{
		{"unset", nil, Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax}, nil},
		{"valid", map[string]string{EnvMaxAttempts: "7", EnvRetryBaseMS: "250", EnvRetryMaxMS: "5000"},
			Knobs{MaxAttempts: 7, Base: 250 * time.Millisecond, Max: 5 * time.Second}, nil},
		{"bounds inclusive", map[string]string{EnvMaxAttempts: "100", EnvRetryBaseMS: "100", EnvRetryMaxMS: "300000"},
			Knobs{MaxAttempts: 100, Base: 100 * time.Millisecond, Max: 300 * time.Second}, nil},
		{"out of range", map[string]string{EnvMaxAttempts: "0", EnvRetryBaseMS: "99", EnvRetryMaxMS: "300001"},
			Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax}, []string{
				"Ignoring invalid BUILD_LOCK_API_MAX_ATTEMPTS=0; expected an integer between 1 and 100.",
				"Ignoring invalid BUILD_LOCK_API_RETRY_BASE_MS=99; expected an integer between 100 and 60000.",
				"Ignoring invalid BUILD_LOCK_API_RETRY_MAX_MS=300001; expected an integer between 1000 and 300000.",
			}},
		{"not digits", map[string]string{EnvMaxAttempts: "5.0", EnvRetryBaseMS: " 200", EnvRetryMaxMS: "-1"},
			Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax}, []string{
				"Ignoring invalid BUILD_LOCK_API_MAX_ATTEMPTS=5.0; expected an integer between 1 and 100.",
				"Ignoring invalid BUILD_LOCK_API_RETRY_BASE_MS= 200; expected an integer between 100 and 60000.",
				"Ignoring invalid BUILD_LOCK_API_RETRY_MAX_MS=-1; expected an integer between 1000 and 300000.",
			}},
		{"overflow", map[string]string{EnvMaxAttempts: "99999999999999999999999"}, Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax},
			[]string{"Ignoring invalid BUILD_LOCK_API_MAX_ATTEMPTS=99999999999999999999999; expected an integer between 1 and 100."}},
		{"newline cannot inject a workflow command", map[string]string{EnvMaxAttempts: "3\n::error::x"}, Knobs{Base: DefaultRetryBase, Max: DefaultRetryMax},
			[]string{"Ignoring invalid BUILD_LOCK_API_MAX_ATTEMPTS=3?::error::x; expected an integer between 1 and 100."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k, w := KnobsFromValues(tc.env[EnvMaxAttempts], tc.env[EnvRetryBaseMS], tc.env[EnvRetryMaxMS])
			assert.Equal(t, tc.want, k, "knobs")
			assert.Equal(t, strings.Join(tc.warnings, "\n"), strings.Join(w, "\n"), "warnings")
		})
	}
}

func TestKnobsValidate(t *testing.T) {
	t.Parallel()
	for _, k := range []Knobs{{MaxAttempts: 101}, {Base: time.Millisecond}, {Max: 999 * time.Millisecond}, {Max: time.Hour}} {
		assert.Error(t, k.Validate(), "%+v: expected a validation error", k)
	}
	assert.NoError(t, (Knobs{}).Validate(), "zero knobs")
}
