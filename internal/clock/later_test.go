package clock

import (
	"testing"
	"time"
)

func TestLaterAndEarlier(t *testing.T) {
	t.Parallel()
	a := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	b := a.Add(time.Second)
	if Later(a, b) != b || Later(b, a) != b || Earlier(a, b) != a || Earlier(b, a) != a {
		t.Fatal("Later and Earlier disagree with the clock's order")
	}
	// Equal instants in other locations: the first argument is kept.
	c := a.In(time.FixedZone("x", 3600))
	if got := Later(c, a); got.Location() != c.Location() {
		t.Fatalf("Later of equal instants returned %v, want the first", got)
	}
	if got := Earlier(c, a); got.Location() != c.Location() {
		t.Fatalf("Earlier of equal instants returned %v, want the first", got)
	}
}
