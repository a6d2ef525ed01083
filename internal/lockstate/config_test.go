package lockstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conf is a decoded config with maxOvertakes at its default and
// fencedAdmission off.
func conf(maxHolders int, serial, lifecycle, health bool, cooldown int) Config {
	return Config{MaxHolders: maxHolders, RunnerSerialization: serial, ResourceLifecycle: lifecycle, AccountHealth: health,
		ReleaseCooldownSeconds: cooldown, MaxOvertakes: DefaultMaxOvertakes}
}

func fenced(c Config, maxOvertakes int) Config {
	c.FencedAdmission = true
	c.MaxOvertakes = maxOvertakes
	return c
}

func TestDecodeConfig(t *testing.T) {
	t.Parallel()
	def := DefaultConfig()
	cases := []struct {
		name     string
		in       string
		want     Config
		warnings int
	}{
		{"empty object", `{}`, def, 0},
		{"max holders number", `{"maxHolders":4}`, conf(4, false, false, false, 360), 0},
		{"max holders digit string", `{"maxHolders":"4"}`, conf(4, false, false, false, 360), 0},
		{"max holders integral float", `{"maxHolders":2.0}`, conf(2, false, false, false, 360), 0},
		{"max holders too large keeps other keys", `{"maxHolders":65,"releaseCooldownSeconds":5}`, conf(1, false, false, false, 5), 1},
		{"max holders zero", `{"maxHolders":0}`, def, 1},
		{"max holders fraction", `{"maxHolders":1.5}`, def, 1},
		{"max holders signed string", `{"maxHolders":"+4"}`, def, 1},
		{"full chain", `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`, conf(2, true, true, true, 0), 0},
		{"non boolean flag resets everything", `{"maxHolders":3,"runnerSerialization":"true"}`, def, 1},
		{"lifecycle without serialization", `{"maxHolders":3,"resourceLifecycle":true}`, def, 1},
		{"account health without lifecycle", `{"maxHolders":3,"runnerSerialization":true,"accountHealth":true}`, def, 1},
		{"false flags without prerequisites are fine", `{"resourceLifecycle":false,"accountHealth":false}`, def, 0},
		{"cooldown out of range", `{"releaseCooldownSeconds":86401}`, def, 1},
		{"cooldown string", `{"releaseCooldownSeconds":"5"}`, def, 1},
		{"two fallbacks two warnings", `{"maxHolders":"x","releaseCooldownSeconds":-1}`, def, 2},
		{"malformed json", `{`, def, 1},
		{"not an object", `[1]`, def, 1},
		{"unknown keys ignored", `{"kind":"x"}`, def, 0},
		{"fenced chain", `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"maxOvertakes":5}`, fenced(conf(2, true, true, true, 360), 5), 0},
		{"fenced default max overtakes", `{"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true}`, fenced(conf(1, true, true, true, 360), DefaultMaxOvertakes), 0},
		{"max overtakes zero is strict fifo", `{"maxOvertakes":0}`, func() Config { c := def; c.MaxOvertakes = 0; return c }(), 0},
		{"max overtakes cap", `{"maxOvertakes":100}`, func() Config { c := def; c.MaxOvertakes = 100; return c }(), 0},
		{"max overtakes too large keeps other keys", `{"maxOvertakes":101,"maxHolders":3}`, conf(3, false, false, false, 360), 1},
		{"max overtakes negative", `{"maxOvertakes":-1}`, def, 1},
		{"max overtakes string", `{"maxOvertakes":"2"}`, def, 1},
		{"max overtakes fraction", `{"maxOvertakes":1.5}`, def, 1},
		{"fenced without account health", `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"fencedAdmission":true}`, def, 1},
		{"fenced not boolean", `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":1}`, def, 1},
		{"fenced false without prerequisite", `{"fencedAdmission":false}`, def, 0},
		{"api share", `{"apiShare":0.25,"maxHolders":2}`, func() Config { c := conf(2, false, false, false, 360); c.APIShare = 0.25; return c }(), 0},
		{"api share whole", `{"apiShare":1}`, func() Config { c := def; c.APIShare = 1; return c }(), 0},
		{"api share smallest", `{"apiShare":0.01}`, func() Config { c := def; c.APIShare = 0.01; return c }(), 0},
		{"api share too small keeps other keys", `{"apiShare":0.001,"maxHolders":3}`, conf(3, false, false, false, 360), 1},
		{"api share above one", `{"apiShare":1.5}`, def, 1},
		{"api share zero", `{"apiShare":0}`, def, 1},
		{"api share string", `{"apiShare":"0.5"}`, def, 1},
		{"api share null", `{"apiShare":null}`, def, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, warnings := DecodeConfig([]byte(c.in))
			assert.Equal(t, c.want, got)
			assert.Len(t, warnings, c.warnings, "%v", warnings)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	assert.NoError(t, DefaultConfig().validate())
	assert.NoError(t, fenced(conf(1, true, true, true, 0), 0).validate())
	assert.NoError(t, Config{MaxHolders: 1}.validate(), "the zero maxOvertakes is strict FIFO, not invalid")
	for _, c := range []Config{
		{MaxHolders: 0}, {MaxHolders: 65}, {MaxHolders: 1, ReleaseCooldownSeconds: -1}, {MaxHolders: 1, ResourceLifecycle: true},
		{MaxHolders: 1, RunnerSerialization: true, AccountHealth: true},
		{MaxHolders: 1, RunnerSerialization: true, ResourceLifecycle: true, FencedAdmission: true},
		{MaxHolders: 1, MaxOvertakes: -1}, {MaxHolders: 1, MaxOvertakes: 101},
	} {
		requireCode(t, c.validate(), CodeInvalidConfig)
	}
}

func TestConfigShare(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]float64{0: 1, 0.25: 0.25, 1: 1, 0.001: 1, 2: 1, MinAPIShare: MinAPIShare} {
		assert.Equal(t, want, Config{APIShare: in}.Share(), "apiShare %g", in)
	}
}

func TestDecodeConfigRefusesRepeatedKeys(t *testing.T) {
	t.Parallel()
	for _, data := range []string{`{"maxHolders":1,"maxHolders":64}`, `{"runnerSerialization":true,"runnerSerialization":false}`, "{\"maxHolders\":\"4\xff\"}"} {
		cfg, warnings := DecodeConfig([]byte(data))
		assert.Equal(t, DefaultConfig(), cfg, data)
		require.Len(t, warnings, 1)
		assert.Contains(t, warnings[0], "lock config is refused")
	}
}
