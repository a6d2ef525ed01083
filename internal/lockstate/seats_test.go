package lockstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fencedFlags = `"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true`

const threeSeats = `"seats":[{"name":"pro-a-1","labels":["pro"]},{"name":"pro-a-2","labels":["pro"]},{"name":"plus-1","labels":["plus"]}]`

func TestDecodeSeatConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		doc     string
		seats   []SeatConfig
		prio    PriorityConfig
		max     int
		refused string // a fragment of the warning when the whole config is refused
	}{
		{name: "three seats set maxHolders", doc: `{` + fencedFlags + `,` + threeSeats + `}`, max: 3,
			seats: []SeatConfig{{"pro-a-1", []string{"pro"}}, {"pro-a-2", []string{"pro"}}, {"plus-1", []string{"plus"}}}},
		{name: "agreeing maxHolders", doc: `{` + fencedFlags + `,"maxHolders":3,` + threeSeats + `}`, max: 3,
			seats: []SeatConfig{{"pro-a-1", []string{"pro"}}, {"pro-a-2", []string{"pro"}}, {"plus-1", []string{"plus"}}}},
		{name: "labels sorted", doc: `{` + fencedFlags + `,"seats":[{"name":"s","labels":["win","pro"]}]}`, max: 1, seats: []SeatConfig{{"s", []string{"pro", "win"}}}},
		{name: "disagreeing maxHolders", doc: `{` + fencedFlags + `,"maxHolders":2,` + threeSeats + `}`, refused: "must agree"},
		{name: "without fencedAdmission", doc: `{"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,` + threeSeats + `}`, refused: "require fencedAdmission"},
		{name: "priority without fencedAdmission", doc: `{"priority":{"max":5}}`, refused: "require fencedAdmission"},
		{name: "unknown seat key", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":["x"],"serial":"S"}]}`, refused: "unknown key"},
		{name: "upper-case name", doc: `{` + fencedFlags + `,"seats":[{"name":"A","labels":["x"]}]}`, refused: "name must be"},
		{name: "65-char name", doc: `{` + fencedFlags + `,"seats":[{"name":"` + strings.Repeat("a", 65) + `","labels":["x"]}]}`, refused: "name must be"},
		{name: "repeated name", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":["x"]},{"name":"a","labels":["y"]}]}`, refused: "more than once"},
		{name: "secret suffixes collide", doc: `{` + fencedFlags + `,"seats":[{"name":"pro-1","labels":["x"]},{"name":"pro.1","labels":["y"]}]}`, refused: "same secret suffix PRO_1"},
		{name: "no labels", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":[]}]}`, refused: "labels must be"},
		{name: "17 labels", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}]}`, refused: "labels must be"},
		{name: "repeated label", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":["x","x"]}]}`, refused: "repeats"},
		{name: "label not a string", doc: `{` + fencedFlags + `,"seats":[{"name":"a","labels":[1]}]}`, refused: "label"},
		{name: "empty seats", doc: `{` + fencedFlags + `,"seats":[]}`, refused: "array of 1"},
		{name: "seats not an array", doc: `{` + fencedFlags + `,"seats":{}}`, refused: "array of 1"},
		{name: "priority", doc: `{` + fencedFlags + `,"priority":{"max":9,"maxForPullRequests":0,"repositories":["Ambiguous-Interactive/game"]}}`, max: 1,
			prio: PriorityConfig{Max: 9, Repositories: "Ambiguous-Interactive/game"}},
		{name: "priority unknown key", doc: `{` + fencedFlags + `,"priority":{"max":9,"min":0}}`, refused: "unknown key"},
		{name: "priority max 10", doc: `{` + fencedFlags + `,"priority":{"max":10}}`, refused: "max must be"},
		{name: "priority max string", doc: `{` + fencedFlags + `,"priority":{"max":"5"}}`, refused: "max must be"},
		{name: "pull requests above max", doc: `{` + fencedFlags + `,"priority":{"max":2,"maxForPullRequests":3}}`, refused: "maxForPullRequests"},
		{name: "bad repository", doc: `{` + fencedFlags + `,"priority":{"max":2,"repositories":["nope"]}}`, refused: "owner/name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, warnings := DecodeConfig([]byte(c.doc))
			require.NoError(t, cfg.validate())
			if c.refused != "" {
				assert.Equal(t, DefaultConfig(), cfg)
				require.NotEmpty(t, warnings)
				assert.Contains(t, warnings[len(warnings)-1], c.refused)
				assert.Contains(t, warnings[len(warnings)-1], "safe defaults for the entire config")
				return
			}
			assert.Empty(t, warnings)
			assert.Equal(t, c.seats, cfg.Seats.List())
			assert.Equal(t, c.prio, cfg.Priority)
			assert.Equal(t, c.max, cfg.MaxHolders)
		})
	}
}

// TestDecodeConfigWithoutSeatsUnchanged pins that a config without the new
// keys decodes exactly as before issue 25.
func TestDecodeConfigWithoutSeatsUnchanged(t *testing.T) {
	t.Parallel()
	cfg, w := DecodeConfig([]byte(`{` + fencedFlags + `,"maxHolders":2}`))
	assert.Empty(t, w)
	assert.Zero(t, cfg.Seats)
	assert.Zero(t, cfg.Priority)
	assert.Equal(t, 2, cfg.MaxHolders)
}

func TestConfigValidateSeats(t *testing.T) {
	t.Parallel()
	good := cfgSeats(2, SeatConfig{"a", []string{"pro"}}, SeatConfig{"b", []string{"plus"}})
	require.NoError(t, good.validate())
	for name, mutate := range map[string]func(*Config){
		"count":    func(c *Config) { c.MaxHolders = 3 },
		"unfenced": func(c *Config) { c.FencedAdmission = false },
		"repeat":   func(c *Config) { c.Seats = NewSeatList([]SeatConfig{{"a", []string{"pro"}}, {"a", []string{"plus"}}}) },
		"unsorted": func(c *Config) {
			c.Seats = NewSeatList([]SeatConfig{{"a", []string{"z", "a"}}, {"b", []string{"plus"}}})
		},
		"no labels":    func(c *Config) { c.Seats = NewSeatList([]SeatConfig{{"a", nil}, {"b", []string{"plus"}}}) },
		"bad priority": func(c *Config) { c.Priority = PriorityConfig{Max: 1, MaxForPullRequests: 2} },
	} {
		c := cfgSeats(2, SeatConfig{"a", []string{"pro"}}, SeatConfig{"b", []string{"plus"}})
		mutate(&c)
		requireCode(t, c.validate(), CodeInvalidConfig)
		_ = name
	}
}

func TestCheckLabels(t *testing.T) {
	t.Parallel()
	cfg := cfgSeats(2, SeatConfig{"a", []string{"pro", "win"}}, SeatConfig{"b", []string{"plus"}})
	for _, ok := range [][]string{nil, {"pro"}, {"pro", "win"}, {"plus"}} {
		assert.NoError(t, CheckLabels(cfg, ok), "%v", ok)
	}
	err := CheckLabels(cfg, []string{"plus", "pro"})
	requireCode(t, err, CodeNoMatchingSeat)
	assert.Contains(t, err.Error(), "plus, pro, win")
	requireCode(t, CheckLabels(cfgFenced(2, 2), []string{"pro"}), CodeNoMatchingSeat)
}

func TestParseLabelExpression(t *testing.T) {
	t.Parallel()
	got, err := ParseLabelExpression(" win , pro,win ")
	require.NoError(t, err)
	assert.Equal(t, []string{"pro", "win"}, got)
	got, err = ParseLabelExpression("")
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, bad := range []string{"Pro", "a,,b", "a b", strings.Repeat("x", 65)} {
		_, err := ParseLabelExpression(bad)
		requireCode(t, err, CodeInvalidSeatRequest)
	}
}

func TestPriorityPrivilege(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(2, 2)
	cfg.Priority = PriorityConfig{Max: 9, MaxForPullRequests: 0, Repositories: "Ambiguous-Interactive/game"}
	game := PriorityCaller{Repository: "ambiguous-interactive/GAME"}
	cases := []struct {
		name   string
		cfg    Config
		caller PriorityCaller
		prio   int
		code   Code
	}{
		{"listed repository push", cfg, game, 9, ""},
		{"pull request held to 0", cfg, PriorityCaller{Repository: game.Repository, PullRequest: true}, 5, CodePriorityNotAllowed},
		{"pull request at 0", cfg, PriorityCaller{Repository: game.Repository, PullRequest: true}, 0, ""},
		{"unlisted repository", cfg, PriorityCaller{Repository: "Ambiguous-Interactive/other"}, 1, CodePriorityNotAllowed},
		{"no priority config", cfgFenced(2, 2), game, 1, CodePriorityNotAllowed},
		{"out of range", cfg, game, 10, CodeInvalidSeatRequest},
		{"negative", cfg, game, -1, CodeInvalidSeatRequest},
	}
	for _, c := range cases {
		err := CheckPriority(c.cfg, c.caller, c.prio)
		if c.code == "" {
			assert.NoError(t, err, c.name)
			continue
		}
		requireCode(t, err, c.code)
	}
}

func FuzzDecodeSeatConfig(f *testing.F) {
	for _, seed := range []string{`{` + fencedFlags + `,` + threeSeats + `}`, `{` + fencedFlags + `,"maxHolders":"3",` + threeSeats + `}`,
		`{` + fencedFlags + `,"priority":{"max":9,"maxForPullRequests":1,"repositories":["a/b"]}}`, `{"seats":[{"name":"a","labels":["b"]}]}`,
		`{` + fencedFlags + `,"seats":[{"name":"a","labels":["b","b"]}]}`, `{` + fencedFlags + `,"seats":[{"name":"a","labels":["b"],"name":"c"}]}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _ := DecodeConfig(data)
		require.NoError(t, cfg.validate())
		if cfg.Seats.Len() > 0 {
			require.Equal(t, cfg.Seats.Len(), cfg.MaxHolders)
			require.Equal(t, cfg.Seats, NewSeatList(cfg.Seats.List()))
			for _, l := range cfg.SeatLabels() {
				require.NoError(t, CheckLabels(cfg, []string{l}))
			}
		}
	})
}

// cfgSeats is a fenced config naming seats (maxHolders = their count).
func cfgSeats(k int, seats ...SeatConfig) Config {
	c := cfgFenced(len(seats), k)
	c.Seats = NewSeatList(seats)
	return c
}

// TestConfigStaysComparable: callers compare configs with == (history
// replays); named seats and priorities must not break that.
func TestConfigStaysComparable(t *testing.T) {
	t.Parallel()
	a, _ := DecodeConfig([]byte(`{` + fencedFlags + `,` + threeSeats + `,"priority":{"max":3,"repositories":["a/b","c/d"]}}`))
	b, _ := DecodeConfig([]byte(`{` + fencedFlags + `,` + threeSeats + `,"priority":{"max":3,"repositories":["a/b","c/d"]}}`))
	assert.True(t, a == b)
	assert.False(t, a == proPlus(2))
	assert.Equal(t, []string{"a/b", "c/d"}, a.Priority.RepositoryList())
}

func TestSeatSecretSuffix(t *testing.T) {
	t.Parallel()
	for seat, want := range map[string]string{"pro-a-1": "PRO_A_1", "plus.1": "PLUS_1", "s_2": "S_2", "9": "9"} {
		assert.Equal(t, want, SeatSecretSuffix(seat), seat)
		assert.Regexp(t, `^[A-Z0-9_]+$`, SeatSecretSuffix(seat), "a valid GitHub secret name part")
	}
	cfg := DefaultConfig()
	cfg.FencedAdmission, cfg.RunnerSerialization, cfg.ResourceLifecycle, cfg.AccountHealth = true, true, true, true
	cfg.Seats, cfg.MaxHolders = NewSeatList([]SeatConfig{{"a-1", []string{"x"}}, {"a_1", []string{"x"}}}), 2
	require.ErrorContains(t, cfg.validate(), "same secret suffix A_1")
}
