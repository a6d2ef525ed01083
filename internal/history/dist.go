package history

import (
	"math"
	"sort"
	"time"
)

// Dist summarizes a set of durations, in seconds. Percentiles use the
// nearest-rank method: the p-th percentile of n sorted values is the value
// at rank ceil(p/100 × n).
type Dist struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_seconds"`
	P95   float64 `json:"p95_seconds"`
	P99   float64 `json:"p99_seconds"`
	Mean  float64 `json:"mean_seconds"`
	Max   float64 `json:"max_seconds"`
}

// NewDist summarizes ds (which it sorts).
func NewDist(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return Dist{
		Count: len(ds),
		P50:   Percentile(ds, 50).Seconds(),
		P95:   Percentile(ds, 95).Seconds(),
		P99:   Percentile(ds, 99).Seconds(),
		Mean:  (sum / time.Duration(len(ds))).Seconds(),
		Max:   ds[len(ds)-1].Seconds(),
	}
}

// Percentile is the nearest-rank p-th percentile of sorted (ascending).
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}
