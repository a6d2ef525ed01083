package lockstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Config defaults and bounds (spec §2.8, Appendix A).
const (
	// DefaultMaxHolders makes every lock a mutex unless configured: a missing
	// or invalid value can never over-run a license.
	DefaultMaxHolders = 1
	// MaxHoldersCap bounds maxHolders.
	MaxHoldersCap = 64
	// DefaultReleaseCooldownSeconds historically absorbed the ~5 minute Unity
	// activation handoff; it applies whenever the config cannot be trusted.
	DefaultReleaseCooldownSeconds = 360
	// MaxReleaseCooldownSeconds bounds releaseCooldownSeconds (one day).
	MaxReleaseCooldownSeconds = 86400
	// DefaultMaxOvertakes is how often a blocked waiter may be passed at
	// schema 6 when the config does not say (or cannot be trusted).
	DefaultMaxOvertakes = 2
	// MaxOvertakesCap bounds maxOvertakes.
	MaxOvertakesCap = 100
	// MinAPIShare is the smallest apiShare: below a hundredth of GitHub's
	// limits a burst could not even join within the hour.
	MinAPIShare = 0.01
)

// Config is the per-lock configuration locks/<lock>.config.json.
// The effective protections are stronger than the flags: state that already
// reached a schema keeps its protections when flags are turned off (see
// EffectiveRunnerSerialization).
//
// The zero value of the two schema-6 fields is valid: FencedAdmission false
// never migrates, and MaxOvertakes 0 means strict FIFO once the state is at
// schema 6. DecodeConfig and DefaultConfig use DefaultMaxOvertakes.
type Config struct {
	MaxHolders             int
	RunnerSerialization    bool
	ResourceLifecycle      bool
	AccountHealth          bool
	ReleaseCooldownSeconds int
	// FencedAdmission (requires AccountHealth) migrates a drained schema-5
	// lock to schema 6: fencing tokens and bounded overtaking. One-way:
	// turning it off later keeps schema 6.
	FencedAdmission bool
	// MaxOvertakes (0..MaxOvertakesCap) bounds how many admissions may pass
	// one blocked waiter at schema 6. It has no effect below schema 6.
	MaxOvertakes int
	// APIShare (MinAPIShare..1; 0 means 1) is the share of GitHub's
	// secondary rate limits of the writer App's installation this lock's
	// jobs pace themselves to: set it below 1 when several locks (or other
	// tools) share the App. It paces requests only; safety never depends
	// on it.
	APIShare float64
	// Seats (issue 25; requires FencedAdmission) names the lock's seats
	// and their labels; its length is MaxHolders. Empty means anonymous
	// seats, as before. Held in a comparable form so Config stays
	// comparable with ==.
	Seats SeatList
	// Priority (issue 25; requires FencedAdmission) allows priority
	// classes above 0 (AllowedPriority); the zero value allows none.
	Priority PriorityConfig
	// SerializeBy (issue 26; SerializeByRunner or SerializeByMachine, ""
	// means runner) is what runner serialization keys on. "machine"
	// requires RunnerSerialization (schema >= 3); see serialKeys.
	SerializeBy string
}

// Share is APIShare with its default: 1 for 0 or anything out of range.
func (c Config) Share() float64 {
	if c.APIShare < MinAPIShare || c.APIShare > 1 {
		return 1
	}
	return c.APIShare
}

// DefaultConfig returns the safe defaults used for a missing or untrusted
// config: maxHolders 1, every flag off, releaseCooldownSeconds 360,
// maxOvertakes 2.
func DefaultConfig() Config {
	return Config{MaxHolders: DefaultMaxHolders, ReleaseCooldownSeconds: DefaultReleaseCooldownSeconds, MaxOvertakes: DefaultMaxOvertakes}
}

// validate reports whether c is within the ranges DecodeConfig produces.
func (c Config) validate() error {
	switch {
	case c.MaxHolders < 1 || c.MaxHolders > MaxHoldersCap:
		return newError(CodeInvalidConfig, fmt.Sprintf("validate lock config: maxHolders %d is outside 1..%d", c.MaxHolders, MaxHoldersCap))
	case c.ReleaseCooldownSeconds < 0 || c.ReleaseCooldownSeconds > MaxReleaseCooldownSeconds:
		return newError(CodeInvalidConfig, fmt.Sprintf("validate lock config: releaseCooldownSeconds %d is outside 0..%d", c.ReleaseCooldownSeconds, MaxReleaseCooldownSeconds))
	case c.ResourceLifecycle && !c.RunnerSerialization:
		return newError(CodeInvalidConfig, "validate lock config: resourceLifecycle requires runnerSerialization")
	case c.AccountHealth && !c.ResourceLifecycle:
		return newError(CodeInvalidConfig, "validate lock config: accountHealth requires resourceLifecycle")
	case c.FencedAdmission && !c.AccountHealth:
		return newError(CodeInvalidConfig, "validate lock config: fencedAdmission requires accountHealth")
	case c.MaxOvertakes < 0 || c.MaxOvertakes > MaxOvertakesCap:
		return newError(CodeInvalidConfig, fmt.Sprintf("validate lock config: maxOvertakes %d is outside 0..%d", c.MaxOvertakes, MaxOvertakesCap))
	case c.SerializeBy != "" && c.SerializeBy != SerializeByRunner && c.SerializeBy != SerializeByMachine:
		return newError(CodeInvalidConfig, "validate lock config: serializeBy must be \"runner\" or \"machine\"")
	case c.ByMachine() && !c.RunnerSerialization:
		return newError(CodeInvalidConfig, "validate lock config: serializeBy \"machine\" requires runnerSerialization")
	}
	return c.validateSeats()
}

// DecodeConfig parses a lock config file. It never fails: every problem falls
// back per spec §2.8 and adds one warning string.
//   - Malformed JSON or a non-object: defaults.
//   - maxHolders not an integer 1..64 (a digit string such as "4" is accepted):
//     1, other keys kept.
//   - releaseCooldownSeconds not an integer 0..86400: 360, other keys kept.
//   - maxOvertakes not an integer 0..100 (a JSON number; strings are
//     refused): 2, other keys kept.
//   - apiShare not a JSON number from 0.01 through 1: 1 (the whole of
//     GitHub's limits), other keys kept.
//   - runnerSerialization, resourceLifecycle, accountHealth or
//     fencedAdmission not a JSON boolean, or enabled without its
//     prerequisite (the chain runnerSerialization <- resourceLifecycle <-
//     accountHealth <- fencedAdmission): the entire config is the defaults.
//   - serializeBy (issue 26) not the string "runner" or "machine", or
//     "machine" without runnerSerialization=true (schema >= 3): the entire
//     config is the defaults.
//   - seats or priority (issue 25) malformed in any way, either without
//     fencedAdmission, or seats whose count disagrees with a present
//     maxHolders: the entire config is the defaults (decodeSeatConfig).
//   - Invalid UTF-8, a lone surrogate escape or a repeated key anywhere
//     (CheckStrictJSON): the entire config is the defaults.
//
// A missing key takes its default silently. Reading the file (404 means
// defaults silently; transport, 401, 403, 408, 429 and 5xx mean defaults
// with a warning) is the caller's job.
func DecodeConfig(data []byte) (Config, []string) {
	var warnings []string
	if serr := CheckStrictJSON(data); serr != nil {
		// A reviewed file with a repeated key ({"maxHolders":1,
		// "maxHolders":64}) says two things; neither is trusted.
		return DefaultConfig(), []string{fmt.Sprintf("lock config is refused (%s): %s at %s; using safe defaults", serr.Code, serr.Detail, serr.Path)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return DefaultConfig(), []string{"lock config is not valid JSON; using safe defaults"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return DefaultConfig(), []string{"lock config is not valid JSON; using safe defaults"}
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return DefaultConfig(), []string{"lock config must contain a JSON object; using safe defaults"}
	}
	cfg := DefaultConfig()
	if v, ok := obj["maxHolders"]; ok {
		n, valid := configInteger(v, true)
		if valid && n >= 1 && n <= MaxHoldersCap {
			cfg.MaxHolders = int(n)
		} else {
			warnings = append(warnings, fmt.Sprintf("lock config maxHolders must be an integer from 1 through %d; using %d", MaxHoldersCap, DefaultMaxHolders))
		}
	}
	if v, ok := obj["releaseCooldownSeconds"]; ok {
		n, valid := configInteger(v, false)
		if valid && n >= 0 && n <= MaxReleaseCooldownSeconds {
			cfg.ReleaseCooldownSeconds = int(n)
		} else {
			warnings = append(warnings, fmt.Sprintf("lock config releaseCooldownSeconds must be an integer from 0 through %d; using %d", MaxReleaseCooldownSeconds, DefaultReleaseCooldownSeconds))
		}
	}
	if v, ok := obj["maxOvertakes"]; ok {
		n, valid := configInteger(v, false)
		if valid && n >= 0 && n <= MaxOvertakesCap {
			cfg.MaxOvertakes = int(n)
		} else {
			warnings = append(warnings, fmt.Sprintf("lock config maxOvertakes must be an integer from 0 through %d; using %d", MaxOvertakesCap, DefaultMaxOvertakes))
		}
	}
	if v, ok := obj["apiShare"]; ok {
		f, valid := configFraction(v)
		if valid && f >= MinAPIShare && f <= 1 {
			cfg.APIShare = f
		} else {
			warnings = append(warnings, fmt.Sprintf("lock config apiShare must be a number from %g through 1; using 1 (all of GitHub's limits)", MinAPIShare))
		}
	}
	flags := []struct {
		key     string
		dst     *bool
		prereq  *bool
		prereqK string
	}{
		{"runnerSerialization", &cfg.RunnerSerialization, nil, ""},
		{"resourceLifecycle", &cfg.ResourceLifecycle, &cfg.RunnerSerialization, "runnerSerialization"},
		{"accountHealth", &cfg.AccountHealth, &cfg.ResourceLifecycle, "resourceLifecycle"},
		{"fencedAdmission", &cfg.FencedAdmission, &cfg.AccountHealth, "accountHealth"},
	}
	for _, f := range flags {
		v, ok := obj[f.key]
		if !ok {
			continue
		}
		b, isBool := v.(bool)
		if !isBool {
			return DefaultConfig(), append(warnings, fmt.Sprintf("lock config %s must be a JSON boolean; using safe defaults for the entire config", f.key))
		}
		if b && f.prereq != nil && !*f.prereq {
			return DefaultConfig(), append(warnings, fmt.Sprintf("lock config %s requires %s=true; using safe defaults for the entire config", f.key, f.prereqK))
		}
		*f.dst = b
	}
	if v, ok := obj["serializeBy"]; ok {
		str, isString := v.(string)
		switch {
		case !isString || (str != SerializeByRunner && str != SerializeByMachine):
			return DefaultConfig(), append(warnings, `lock config serializeBy must be "runner" or "machine"; using safe defaults for the entire config`)
		case str == SerializeByMachine && !cfg.RunnerSerialization:
			return DefaultConfig(), append(warnings, `lock config serializeBy "machine" requires runnerSerialization=true (schema 3 or later); using safe defaults for the entire config`)
		}
		cfg.SerializeBy = str
	}
	if w := decodeSeatConfig(obj, &cfg); w != "" {
		return DefaultConfig(), append(warnings, w)
	}
	return cfg, warnings
}

// configFraction accepts a finite JSON number (strings are refused).
func configFraction(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// configInteger accepts a JSON number with an integral value, or (when
// digits is set) a string of ASCII digits.
func configInteger(v any, digits bool) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1e15 {
			return 0, false
		}
		return int64(f), true
	case string:
		if !digits || x == "" || len(x) > 15 {
			return 0, false
		}
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}
