package evidence_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
)

const (
	entitlement = "[Licensing::Module] Successfully returned the entitlement license"
	ulfReturned = "[Licensing::Client] Successfully returned ULF license with serial number: [REDACTED]"
	ulfSkipped  = "[Licensing::Module] Error: Serial number unavailable for ULF return; skipping operation"
	positive    = entitlement + "\n" + ulfReturned + "\n"
)

func in(log string) evidence.Input {
	return evidence.Input{Completed: true, ExitCode: 0, CaptureComplete: true, ReturnLog: log}
}

func with(i evidence.Input, f func(*evidence.Input)) evidence.Input { f(&i); return i }

// TestClassifyPrecedenceRowByRow walks the nine rules of §1.10: each row is
// the weakest input that reaches the rule, plus the inputs that show the
// rule above it wins.
func TestClassifyPrecedenceRowByRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     evidence.Input
		rule   int
		status string
		health string
		reason string
	}{
		// Rule 1: 20111 anywhere, above everything, even an incomplete capture.
		{"1 20111 in the return log", in("Error 20111: too many activations\n" + positive), 1, "unknown", "blocked", "unity-account-limit-20111"},
		{"1 20111 in a supplemental file", with(in(positive), func(i *evidence.Input) { i.Supplemental = []string{"x", "code=20111"} }), 1, "unknown", "blocked", "unity-account-limit-20111"},
		{"1 20111 beats an incomplete capture", with(in("20111"), func(i *evidence.Input) { i.CaptureComplete = false }), 1, "unknown", "blocked", "unity-account-limit-20111"},
		{"1 20111 beats a timeout", with(in("x 20111 y"), func(i *evidence.Input) { i.ExitCode = 124 }), 1, "unknown", "blocked", "unity-account-limit-20111"},
		{"1 20111 with an unfinished command", with(in("20111"), func(i *evidence.Input) { i.Completed = false }), 1, "unknown", "blocked", "unity-account-limit-20111"},
		{"1 a longer number is not 20111", in("201110\n120111\n" + positive), 8, "confirmed", "healthy", "cleanup-confirmed"},
		// Rule 2: capture incomplete.
		{"2 capture incomplete", with(in(positive), func(i *evidence.Input) { i.CaptureComplete = false }), 2, "unknown", "healthy", "return-log-truncated"},
		{"2 beats 400006", with(in("400006"), func(i *evidence.Input) { i.CaptureComplete = false }), 2, "unknown", "healthy", "return-log-truncated"},
		// Rule 3: 400006 anywhere.
		{"3 400006 in the return log", in("status 400006\n" + positive), 3, "unknown", "healthy", "unity-return-400006"},
		{"3 400006 in a supplemental file", with(in(positive), func(i *evidence.Input) { i.Supplemental = []string{"400006"} }), 3, "unknown", "healthy", "unity-return-400006"},
		{"3 beats a terminated exit code", with(in("400006"), func(i *evidence.Input) { i.ExitCode = 137 }), 3, "unknown", "healthy", "unity-return-400006"},
		{"3 not 4000060", in("4000060\n" + positive), 8, "confirmed", "healthy", "cleanup-confirmed"},
		// Rule 4: terminated exit codes.
		{"4 exit 137", with(in(positive), func(i *evidence.Input) { i.ExitCode = 137 }), 4, "unknown", "healthy", "return-terminated"},
		{"4 exit 143", with(in(positive), func(i *evidence.Input) { i.ExitCode = 143 }), 4, "unknown", "healthy", "return-terminated"},
		{"4 exit STATUS_CONTROL_C_EXIT", with(in(positive), func(i *evidence.Input) { i.ExitCode = -1073741510 }), 4, "unknown", "healthy", "return-terminated"},
		{"4 exit STATUS_STACK_BUFFER_OVERRUN", with(in(positive), func(i *evidence.Input) { i.ExitCode = -1073740791 }), 4, "unknown", "healthy", "return-terminated"},
		{"4 beats 20113", with(in("20113"), func(i *evidence.Input) { i.ExitCode = 143 }), 4, "unknown", "healthy", "return-terminated"},
		// Rule 5: the return action's timeout code.
		{"5 exit 124", with(in(positive), func(i *evidence.Input) { i.ExitCode = 124 }), 5, "unknown", "healthy", "return-timeout"},
		{"5 beats 20113", with(in("20113"), func(i *evidence.Input) { i.ExitCode = 124 }), 5, "unknown", "healthy", "return-timeout"},
		// Rule 6: 20113 anywhere.
		{"6 20113 in the return log", in("20113\n" + positive), 6, "unknown", "healthy", "unity-20113-unclassified"},
		{"6 20113 in a supplemental file", with(in(positive), func(i *evidence.Input) { i.Supplemental = []string{"(20113)"} }), 6, "unknown", "healthy", "unity-20113-unclassified"},
		{"6 beats a ULF skip", in("20113\n" + ulfSkipped), 6, "unknown", "healthy", "unity-20113-unclassified"},
		// Rule 7: ULF skipped, return log only.
		{"7 ULF skipped with module prefix", in(positive + ulfSkipped), 7, "unknown", "healthy", "return-ulf-skipped"},
		{"7 ULF skipped bare", in(positive + "Serial number unavailable for ULF return"), 7, "unknown", "healthy", "return-ulf-skipped"},
		{"7 ULF skipped padded with CR and spaces", in(positive + "  Serial number unavailable for ULF return\r"), 7, "unknown", "healthy", "return-ulf-skipped"},
		{"7 ULF skipped in a supplemental file does not count", with(in(positive), func(i *evidence.Input) { i.Supplemental = []string{ulfSkipped} }), 8, "confirmed", "healthy", "cleanup-confirmed"},
		// Rule 8: both exact lines, completed.
		{"8 both lines", in(positive), 8, "confirmed", "healthy", "cleanup-confirmed"},
		{"8 bare entitlement line", in("Successfully returned the entitlement license\n" + ulfReturned), 8, "confirmed", "healthy", "cleanup-confirmed"},
		{"8 CRLF lines", in(strings.ReplaceAll(positive, "\n", "\r\n")), 8, "confirmed", "healthy", "cleanup-confirmed"},
		{"8 exit code does not matter", with(in(positive), func(i *evidence.Input) { i.ExitCode = 1 }), 8, "confirmed", "healthy", "cleanup-confirmed"},
		// Rule 9: everything else.
		{"9 empty log", in(""), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 only the entitlement line", in(entitlement), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 only the ULF line", in(ulfReturned), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 not completed", with(in(positive), func(i *evidence.Input) { i.Completed = false }), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 positive lines only in supplemental", with(in(""), func(i *evidence.Input) { i.Supplemental = []string{positive} }), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 entitlement line with a suffix", in(entitlement + ".\n" + ulfReturned), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 entitlement line inside a longer line", in("x " + entitlement + "\n" + ulfReturned), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 ULF line without a serial", in(entitlement + "\n[Licensing::Client] Successfully returned ULF license with serial number:"), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 ULF line with a trailing word", in(entitlement + "\n" + ulfReturned + " more"), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"9 U+0085 is not JavaScript whitespace", in("\u0085" + entitlement + "\n" + ulfReturned), 9, "unknown", "healthy", "return-missing-positive-evidence"},
		{"8 U+FEFF is JavaScript whitespace", in("\ufeff" + entitlement + "\n" + ulfReturned), 8, "confirmed", "healthy", "cleanup-confirmed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := evidence.Classify(tt.in)
			assert.Equal(t, tt.rule, v.Rule.Number, v.Rule.Name)
			assert.Equal(t, lockstate.Report{Status: tt.status, Health: tt.health, Reason: tt.reason}, v.Report)
			assert.Equal(t, tt.rule == 8, v.Safe())
			got, code := lockstate.ValidateReport(v.Report, "")
			require.Empty(t, code, "release must accept every verdict")
			assert.Equal(t, v.Report, got)
		})
	}
}

func TestDefaultIsTheTruncatedUnknownReport(t *testing.T) {
	t.Parallel()
	d := evidence.Default()
	assert.Equal(t, lockstate.Report{Status: "unknown", Health: "healthy", Reason: "return-log-truncated"}, d.Report)
	assert.False(t, d.Safe())
}

func TestULFReturnedLineAcceptsJavaScriptWhitespaceAroundTheColon(t *testing.T) {
	t.Parallel()
	for _, sep := range []string{":", " : ", "\u00a0:\u3000", "\t:\t"} {
		v := evidence.Classify(in(entitlement + "\n[Licensing::Client] Successfully returned ULF license with serial number" + sep + "X1\n"))
		assert.Equal(t, 8, v.Rule.Number, "%q", sep)
	}
	// A serial made only of Unicode spaces is not \S+ in JavaScript.
	v := evidence.Classify(in(entitlement + "\n[Licensing::Client] Successfully returned ULF license with serial number:\u2003\u2003\n"))
	assert.Equal(t, 9, v.Rule.Number)
}

// TestNodeExtMatchesNodeJS: the table is Node.js v20's path.extname (posix
// and win32 agree on these names).
func TestNodeExtMatchesNodeJS(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		".log": "", "..log": ".log", "...log": ".log", "a.log": ".log", "a.": ".", "..": "", "...": ".", ".": "",
		"a": "", "a.b.c": ".c", ".a.b": ".b", "a..": ".", "log": "", "x.LOG": ".LOG", ". log": "",
	} {
		assert.Equal(t, want, evidence.NodeExt(name), "%q", name)
	}
	for name, read := range map[string]bool{"a.log": true, "b.TXT": true, ".log": false, ".txt": false, "..log": true, "a.log.1": false, "a.json": false} {
		assert.Equal(t, read, evidence.WalkReads(name), "%q", name)
	}
}

func TestEntryLimitIsReachedAtTheLimit(t *testing.T) {
	t.Parallel()
	assert.False(t, evidence.EntryLimitReached(evidence.MaxEntries-1))
	assert.True(t, evidence.EntryLimitReached(evidence.MaxEntries))
}

// TestA20111InsideALongerTokenDoesNotRaiseTheIncident: the contract's
// digit-bounded pattern also matches 20111 inside "A20111" or "0x20111";
// such an occurrence is not the account-limit code, so it must not block the
// account (which raises the organization-wide incident). The seat is still
// not proven clean: unknown/healthy/cleanup-evidence-unknown. A whole 20111
// anywhere still blocks.
func TestA20111InsideALongerTokenDoesNotRaiseTheIncident(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"A20111", "0x20111", "ERR_20111", "took 0.20111 s", "build 20111.5", "é20111", "20111b"} {
		for name, input := range map[string]evidence.Input{
			"return log":   in(text + "\n" + positive),
			"supplemental": with(in(positive), func(i *evidence.Input) { i.Supplemental = []string{text} }),
			"incomplete":   with(in(text+"\n"+positive), func(i *evidence.Input) { i.CaptureComplete = false }),
		} {
			v := evidence.Classify(input)
			assert.Equal(t, lockstate.Report{Status: "unknown", Health: "healthy", Reason: "cleanup-evidence-unknown"}, v.Report, "%q in the %s", text, name)
			assert.Equal(t, 1, v.Rule.Number)
		}
	}
	for _, text := range []string{"code 20111", "(20111)", "20111:", "[Licensing::Client] Error: Code 20111 while returning", "A20111 and then 20111", "x.20111", "20111."} {
		v := evidence.Classify(in(text + "\n" + positive))
		assert.Equal(t, "blocked", v.Report.Health, "%q", text)
	}
}

func TestWholeNumber(t *testing.T) {
	t.Parallel()
	for text, whole := range map[string]bool{
		"20111": true, " 20111 ": true, "=20111;": true, "x.20111": true, "20111.": true, "20111.x": true, "-20111": true,
		"A20111": false, "20111A": false, "0x20111": false, "_20111": false, "1.20111": false, "20111.0": false, "٣20111": false,
	} {
		i := strings.Index(text, "20111")
		assert.Equal(t, whole, evidence.WholeNumber(text, i, i+5), "%q", text)
	}
}
