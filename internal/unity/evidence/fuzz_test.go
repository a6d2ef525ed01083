package evidence_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
)

// severeMarkers are text a log can gain, each with the rule it triggers.
var severeMarkers = []struct {
	text string
	rule int
}{
	{"20111", 1},
	{"Error 400006 from the licensing server", 3},
	{"code 20113", 6},
	{ulfSkipped, 7},
	{"Serial number unavailable for ULF return", 7},
}

// FuzzClassifyNeverSaferWithMoreSevereMarker: for arbitrary logs and
// inputs, (a) every verdict is one release accepts; (b) only rule 8 is safe;
// (c) adding a line with a more severe marker to the return log (or a
// numeric marker to a supplemental file) never yields a safer verdict: the
// rule number can only go down, to at most the marker's rule.
func FuzzClassifyNeverSaferWithMoreSevereMarker(f *testing.F) {
	f.Add(positive, "", true, true, int64(0), uint8(0))
	f.Add(positive, "x", true, true, int64(124), uint8(1))
	f.Add("20111", "", false, false, int64(0), uint8(2))
	f.Add(entitlement+"\r\n"+ulfReturned+"\r\n", "400006", true, true, int64(137), uint8(3))
	f.Add("2011", "1", true, true, int64(-1073741510), uint8(4))
	f.Fuzz(func(t *testing.T, log, supp string, completed, captured bool, exit int64, pick uint8) {
		base := evidence.Input{Completed: completed, ExitCode: exit, CaptureComplete: captured, ReturnLog: log}
		if supp != "" {
			base.Supplemental = []string{supp}
		}
		v := evidence.Classify(base)
		if got, code := lockstate.ValidateReport(v.Report, ""); code != "" || got != v.Report {
			t.Fatalf("verdict %+v rejected by release: %s", v, code)
		}
		if v.Safe() != (v.Rule.Number == 8) {
			t.Fatalf("safe verdict from rule %d", v.Rule.Number)
		}
		m := severeMarkers[int(pick)%len(severeMarkers)]
		worse := base
		worse.ReturnLog = log + "\n" + m.text
		w := evidence.Classify(worse)
		if w.Rule.Number > v.Rule.Number || w.Rule.Number > m.rule {
			t.Fatalf("adding %q moved rule %d to %d", m.text, v.Rule.Number, w.Rule.Number)
		}
		if m.rule != 7 {
			worse = base
			worse.Supplemental = append(append([]string(nil), base.Supplemental...), m.text)
			w = evidence.Classify(worse)
			if w.Rule.Number > v.Rule.Number || w.Rule.Number > m.rule {
				t.Fatalf("adding supplemental %q moved rule %d to %d", m.text, v.Rule.Number, w.Rule.Number)
			}
		}
		// Losing the capture is never safer either.
		lost := base
		lost.CaptureComplete = false
		if l := evidence.Classify(lost); l.Rule.Number > 2 || l.Safe() {
			t.Fatalf("incomplete capture classified by rule %d", l.Rule.Number)
		}
	})
}

// FuzzRedact: no credential (without brackets, not part of the marker)
// survives redaction, and neither does any SC- serial token.
func FuzzRedact(f *testing.F) {
	f.Add("user a@b.c pw hunter22 serial SC-ABCD-1234-EFGH", "a@b.c", "hunter22")
	f.Add("hunter22hunter2", "hunter2", "hunter22")
	f.Add("sc-abcdefgh! SC-1234567", "", "")
	f.Fuzz(func(t *testing.T, text, email, password string) {
		out := evidence.Redact(text, email, password)
		for _, c := range []string{email, password} {
			if len(c) < 4 || strings.ContainsAny(c, "[]") || strings.Contains("REDACTED", c) || !utf8.ValidString(c) {
				continue
			}
			if strings.Contains(out, c) {
				t.Fatalf("credential %q survived: %q", c, out)
			}
		}
		if loc := serialTokenRE.FindStringIndex(out); loc != nil {
			t.Fatalf("serial survived: %q", out[loc[0]:loc[1]])
		}
	})
}
