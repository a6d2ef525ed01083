package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// planFaults chooses the seed's fault schedule: each class is on with some
// probability, at a seed-chosen rate; bursts (401, primary-limit
// exhaustion) fire at seed-chosen moments of the fault window. Everything
// stops when the window closes (emulator ClearFaults).
func (s *sim) planFaults() {
	add := func(f emulator.Fault, what string) {
		s.em.AddFault(f)
		s.sched = append(s.sched, what)
	}
	pct := func(lo, hi int) float64 { return float64(lo+s.intn(hi-lo+1)) / 1000 }
	state := "/repos/" + owner + "/" + lockRepo + "/contents/" + statePath
	if s.intn(2) == 0 {
		lat := time.Duration(50+s.intn(2000)) * time.Millisecond
		p := pct(50, 400)
		add(emulator.Fault{Kind: emulator.Latency, Probability: p, Latency: lat}, fmt.Sprintf("latency %v p=%.3f", lat, p))
	}
	if s.intn(2) == 0 {
		p := pct(5, 60)
		st := []int{500, 502, 503, 504, 408}[s.intn(5)]
		add(emulator.Fault{Kind: emulator.ServerError, Status: st, Probability: p}, fmt.Sprintf("%d p=%.3f", st, p))
	}
	if s.intn(2) == 0 {
		p := pct(5, 30)
		add(emulator.Fault{Kind: emulator.TransportReset, Probability: p}, fmt.Sprintf("reset p=%.3f", p))
	}
	if s.intn(2) == 0 {
		p := pct(20, 100)
		add(emulator.Fault{Method: "PUT", PathPattern: state, Kind: emulator.WriteAcceptedResponseLost, Probability: p}, fmt.Sprintf("response-lost p=%.3f", p))
	}
	if s.intn(2) == 0 {
		p := pct(50, 300)
		n := 1 + s.intn(3)
		add(emulator.Fault{Method: "GET", PathPattern: state, Kind: emulator.StaleRead, Probability: p, StaleVersions: n}, fmt.Sprintf("stale-read %d p=%.3f", n, p))
	}
	if s.intn(3) == 0 {
		p := pct(3, 20)
		ra := strconv.Itoa(1 + s.intn(40))
		kind := emulator.SecondaryRateLimit403
		if s.intn(2) == 0 {
			kind = emulator.TooManyRequests429
		}
		add(emulator.Fault{Kind: kind, Probability: p, RetryAfter: ra}, fmt.Sprintf("%s retry-after=%s p=%.3f", kind, ra, p))
	}
	if s.intn(4) == 0 {
		p := pct(2, 10)
		add(emulator.Fault{Kind: emulator.Stall, Probability: p}, fmt.Sprintf("stall p=%.3f", p))
	}
	if s.intn(5) == 0 {
		p := pct(2, 10)
		add(emulator.Fault{Kind: emulator.HTMLWhoa400, Probability: p}, fmt.Sprintf("whoa-400 p=%.3f", p))
	}
	if s.intn(4) == 0 {
		p := pct(300, 900)
		add(emulator.Fault{Method: "GET", PathPattern: "/repos/" + owner + "/" + lockRepo + "/contents/" + configPath, Kind: emulator.ServerError, Status: 503, Probability: p},
			fmt.Sprintf("config-unreadable p=%.3f", p))
	}
	if s.intn(3) == 0 {
		n := 2 + s.intn(10)
		at := time.Duration(s.intn(int(s.window/time.Second))) * time.Second
		s.sched = append(s.sched, fmt.Sprintf("401 burst x%d at %s", n, at))
		go func() {
			time.Sleep(at)
			s.em.AddFault(emulator.Fault{Kind: emulator.Unauthorized401, Count: n})
		}()
	}
	if s.intn(8) == 0 {
		at := time.Duration(s.intn(int(s.window/time.Second))) * time.Second
		s.sched = append(s.sched, fmt.Sprintf("primary-limit exhausted at %s", at))
		go func() {
			time.Sleep(at)
			s.jobsMu.Lock()
			s.primaryAt = time.Now()
			s.jobsMu.Unlock()
			s.em.AddFault(emulator.Fault{PathPattern: "/repos/" + owner + "/" + lockRepo + "/", Kind: emulator.PrimaryExhausted, Count: 1})
		}()
	}
	if s.intn(3) == 0 {
		// GitHub's content-creation limit at unpredictable moments: a
		// fraction of writes answered 403 "temporarily blocked from content
		// creation", with or without Retry-After (the client then waits at
		// least a minute).
		p := pct(20, 150)
		ra := "none"
		if s.intn(2) == 0 {
			ra = strconv.Itoa(1 + s.intn(60))
		}
		add(emulator.Fault{Kind: emulator.ContentCreationLimit403, ContentOnly: true, Probability: p, RetryAfter: ra},
			fmt.Sprintf("content-creation-403 retry-after=%s p=%.3f", ra, p))
	}
}
