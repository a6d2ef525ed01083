package evidence_test

import (
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
)

// floodLog is a 25 MiB return log (the cap) of ordinary editor lines with
// both positive lines at the end: the worst case the classifier reads.
func floodLog() string {
	line := "[Package Manager] Resolving packages for project (fake line for the benchmark)\n"
	var b strings.Builder
	for b.Len() < evidence.MaxFileBytes-len(positive) {
		b.WriteString(line)
	}
	return b.String()[:evidence.MaxFileBytes-len(positive)-1] + "\n" + positive
}

// BenchmarkClassifyCappedLog reports throughput (MB/s) of the nine rules on
// a log at the 25 MiB cap.
func BenchmarkClassifyCappedLog(b *testing.B) {
	log := floodLog()
	in := evidence.Input{Completed: true, CaptureComplete: true, ReturnLog: log}
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		if v := evidence.Classify(in); !v.Safe() {
			b.Fatal(v.Rule)
		}
	}
}

// BenchmarkRedactCappedLog reports throughput (MB/s) of redaction on a log
// at the cap with no serial in it.
func BenchmarkRedactCappedLog(b *testing.B) {
	log := floodLog()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		_ = evidence.Redact(log, "dev@studio.test", "Pa55-w0rd-Secret!")
	}
}
