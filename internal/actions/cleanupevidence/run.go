package cleanupevidence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
)

// Deps are the edges of a run (see actionkit.Deps; only Getenv, read by
// LoadSettings, and Stdout are used). It is the entry-point shape every classify mode shares.
type Deps = actionkit.Deps

// Input names (reference-behavior §1.10).
const (
	InputReturnLogPath             = "return-log-path"
	InputReturnCommandCompleted    = "return-command-completed"
	InputReturnExitCode            = "return-exit-code"
	InputEvidenceCaptureComplete   = "evidence-capture-complete"
	InputReturnLogDigest           = "return-log-digest"
	InputSupplementalEvidencePaths = "supplemental-evidence-paths"
)

// Output names.
const (
	OutputResourceSafe           = "resource-safe"
	OutputResourceCleanupStatus  = "resource-cleanup-status"
	OutputResourceHealth         = "resource-health"
	OutputResourceReason         = "resource-reason"
	OutputClassificationComplete = "classification-complete"
	OutputEvidenceDigest         = "evidence-digest"
)

var exitCodeRE = regexp.MustCompile(`^-?[0-9]+$`)

// Run is the classify-unity-cleanup-evidence action: LoadSettings, the
// default verdict (unless GITHUB_OUTPUT is unset), then the refusal listing
// every problem, or the classification.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("cleanupevidence: nil context")
	}
	if deps.Getenv == nil || deps.Stdout == nil {
		return errors.New("cleanupevidence: Getenv and Stdout are required")
	}
	s, err := LoadSettings(deps.Getenv)
	if err != nil && s.Files.Output == "" {
		return err
	}
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	if err := writeVerdict(a, evidence.Default(), evidence.ZeroDigest, false); err != nil {
		return err
	}
	if s.Inputs.logPath == "" {
		return missingLog(a, "return-log-path is empty: the return step did not run, or failed before it named its evidence (see its log)")
	}
	if err != nil {
		return err
	}
	return execute(s, a)
}

// execute classifies the evidence of settled settings once the default
// verdict is written.
func execute(s Settings, a *actionio.IO) error {
	in := s.Inputs
	c, err := claim(s, in.logPath)
	if err != nil {
		var re *RefusalError
		if errors.As(err, &re) && re.Code == CodeReturnLogMissing {
			return missingLog(a, re.Message)
		}
		return err
	}
	if in.digest == "" {
		// Only evidence-capture-complete=false gets here (readInputs):
		// a log exists that no digest binds to the return step.
		return refuse(CodeDigestMissing, nil, "evidence-capture-complete is false and return-log-digest is empty, but a return log exists: it cannot be verified against what the return step wrote, so it is not classified (this suite's return step gives the digest of every log it writes)")
	}
	logBytes, text, err := c.readLog()
	if err != nil {
		return err
	}
	if evidence.FileDigest(logBytes) != in.digest {
		return refuse(CodeDigestMismatch, nil, "return-log-digest does not match the return log: the evidence changed after the return step wrote it")
	}
	supp := collectSupplemental(in.supplemental, c.logID, s.Workspace)
	if !supp.complete() {
		a.Warning("Supplemental evidence is incomplete (" + supp.summary() + "); the capture counts as incomplete, and every other supplemental file was still searched.")
	}
	v := evidence.Classify(evidence.Input{
		Completed: in.completed, ExitCode: in.exitCode, CaptureComplete: in.captured && supp.complete(),
		ReturnLog: text, Supplemental: supp.texts,
	})
	digest := evidence.Digest(logBytes, supp.raw)
	if err := c.deleteEvidence(logBytes); err != nil {
		return refuse(CodeDeleteFailed, err, "delete the classified evidence by identity")
	}
	if err := writeVerdict(a, v, digest, true); err != nil {
		return err
	}
	a.Notice(fmt.Sprintf("Cleanup evidence classified by rule %d (%s): %s/%s/%s.", v.Rule.Number, v.Rule.Name, v.Report.Status, v.Report.Health, v.Report.Reason))
	_ = a.Summary(actionkit.Table("Unity cleanup evidence", []actionkit.Row{
		{Field: "Rule", Value: fmt.Sprintf("%d (%s)", v.Rule.Number, markdown.Text(v.Rule.Name))},
		{Field: "Cleanup status", Value: v.Report.Status},
		{Field: "Health", Value: v.Report.Health},
		{Field: "Reason", Value: markdown.Code(v.Report.Reason)},
		{Field: "Supplemental files", Value: strconv.Itoa(len(supp.raw))},
		{Field: "Evidence digest", Value: markdown.Code(digest)},
	}))
	return nil
}

// missingLog reports a return log that does not exist: the outputs become
// unknown/healthy/cleanup-evidence-unknown (no evidence at all, rather than
// the default's return-log-truncated, so release records what happened)
// with classification-complete=false, and the step fails with
// return-log-missing.
func missingLog(a *actionio.IO, why string) error {
	v := evidence.Default()
	v.Report.Reason = lockstate.ReasonCleanupEvidenceUnknown
	if err := writeVerdict(a, v, evidence.ZeroDigest, false); err != nil {
		return err
	}
	return refuse(CodeReturnLogMissing, nil, why+"; the seat's cleanup is unknown, so release quarantines it")
}

// writeVerdict writes the six outputs as one block, classification-complete
// last.
func writeVerdict(a *actionio.IO, v evidence.Verdict, digest string, complete bool) error {
	for _, kv := range [][2]string{
		{OutputResourceSafe, strconv.FormatBool(v.Safe())},
		{OutputResourceCleanupStatus, v.Report.Status},
		{OutputResourceHealth, v.Report.Health},
		{OutputResourceReason, v.Report.Reason},
		{OutputEvidenceDigest, digest},
		{OutputClassificationComplete, strconv.FormatBool(complete)},
	} {
		if err := a.SetOutput(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

type inputs struct {
	logPath, digest     string
	completed, captured bool
	exitCode            int64
	supplemental        []string
}

var listSplitRE = regexp.MustCompile(`\r?\n`)

// parseList splits a newline list, trimming entries and skipping blank
// lines.
func parseList(raw string) []string {
	var out []string
	for _, l := range listSplitRE.Split(raw, -1) {
		if l = jsstr.Trim(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
