package acquire

import "time"

// Polling schedule constants.
const (
	// FastDivisor: an entry that could be admitted next polls at
	// max(unit, base/FastDivisor) — 1.5 s at the default 15 s base — so a
	// freed seat is taken within about two seconds.
	FastDivisor = 10
	// MaxFastSlots bounds how many queue ranks poll fast, whatever
	// maxHolders is, so the organization's request rate stays bounded.
	MaxFastSlots = 4
	// TailCapFactor caps the tail's interval at TailCapFactor × base.
	TailCapFactor = 8
	// CooldownJitter spreads the wake-ups of waiters that all target the
	// same cooldown expiry (spec §3.5: at most 249 ms).
	CooldownJitter = 250 * time.Millisecond
	// minTailSpread is the reference's smallest poll jitter spread.
	minTailSpread = 250 * time.Millisecond
)

// Schedule is the input of PollDelay.
type Schedule struct {
	// Base is poll-seconds as a duration (default 15 s).
	Base time.Duration
	// Unit is one poll-seconds unit (1 s; smaller in the compressed demo);
	// it is the floor of the fast interval.
	Unit time.Duration
	// Rank is the caller's admissible rank: how many queued requests would
	// be admitted before it (0 = next). Negative means unknown (tail).
	Rank int
	// Seats is maxHolders of the current config.
	Seats int
	// UntilCooldown, when positive, is the time until the earliest future
	// cooldown expiry (quarantines and expired cooldowns never count).
	UntilCooldown time.Duration
}

// PollDelay returns the wait before the next poll. r is a jitter draw in
// [0,1).
//
//   - Rank < min(Seats, MaxFastSlots): fast = max(Unit, Base/FastDivisor),
//     plus up to a third of it in jitter (1.5–2.0 s by default).
//   - Otherwise the tail backs off in proportion to its rank:
//     Base × Rank / fastSlots, capped at TailCapFactor × Base, plus up to a
//     third (at least 250 ms) of jitter. The first tail rank polls at Base.
//   - If a cooldown expires sooner than that, the wait is the time to that
//     expiry plus up to 249 ms of jitter.
func PollDelay(s Schedule, r float64) time.Duration {
	if r < 0 || r >= 1 {
		r = 0
	}
	unit := s.Unit
	if unit <= 0 {
		unit = time.Second
	}
	base := max(s.Base, unit)
	fastSlots := min(max(s.Seats, 1), MaxFastSlots)
	var d, spread time.Duration
	if s.Rank >= 0 && s.Rank < fastSlots {
		d = max(unit, base/FastDivisor)
		spread = d / 3
	} else {
		rank := s.Rank
		if rank < 0 {
			rank = fastSlots
		}
		d = min(time.Duration(int64(base)*int64(rank)/int64(fastSlots)), TailCapFactor*base)
		spread = max(minTailSpread, d/3)
	}
	delay := d + time.Duration(r*float64(spread))
	if s.UntilCooldown > 0 && s.UntilCooldown < delay {
		j := time.Duration(r * float64(CooldownJitter))
		if j >= CooldownJitter {
			j = CooldownJitter - time.Millisecond
		}
		delay = s.UntilCooldown + j
	}
	return delay
}
