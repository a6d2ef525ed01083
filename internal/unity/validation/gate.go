package validation

import (
	"fmt"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// Job results as GitHub reports them in needs.<job>.result
// (https://docs.github.com/en/actions/reference/workflows-and-actions/contexts#needs-context),
// and the one cleanup result the licensed matrix requires of the fallback.
const (
	ResultSuccess = "success"
	ResultSkipped = "skipped"
	CleanupNoop   = "noop"
)

// Input names of require-unity-validation, in declaration order.
const (
	InputStaticValidation = "static-validation-result"
	InputClassifier       = "classifier-result"
	InputUnityRequired    = "unity-required"
	InputTrustedRevision  = "trusted-revision"
	InputPreflight        = "preflight-result"
	InputUnity            = "unity-result"
	InputFallback         = "fallback-result"
	InputFallbackCleanup  = "fallback-cleanup-result"
)

// InputNames lists the gate's inputs in declaration order.
var InputNames = []string{InputStaticValidation, InputClassifier, InputUnityRequired, InputTrustedRevision,
	InputPreflight, InputUnity, InputFallback, InputFallbackCleanup}

// Matrix names one of the accepted combinations.
type Matrix string

// The three accepted matrices.
const (
	// MatrixUntrustedSkip: an untrusted revision (no secrets) ran no
	// licensed job at all.
	MatrixUntrustedSkip Matrix = "untrusted-skip"
	// MatrixNonUnitySkip: the audited classifier proved the change
	// Unity-independent; the preflight still ran.
	MatrixNonUnitySkip Matrix = "audited-non-unity-skip"
	// MatrixLicensedSuccess: the licensed job and the hosted fallback
	// release both succeeded and the fallback found nothing to clean.
	MatrixLicensedSuccess Matrix = "licensed-success"
)

// Matrices lists the accepted matrices in the order they are described.
var Matrices = []Matrix{MatrixUntrustedSkip, MatrixNonUnitySkip, MatrixLicensedSuccess}

// Description is the human name of m.
func (m Matrix) Description() string {
	switch m {
	case MatrixUntrustedSkip:
		return "untrusted revision skip"
	case MatrixNonUnitySkip:
		return "audited non-Unity skip"
	case MatrixLicensedSuccess:
		return "licensed success"
	}
	return string(m)
}

// Stable reason codes of a [Verdict], one per rule (unity-lifecycle-facts.md
// §7, in evaluation order).
const (
	ReasonSafe                     = "safe"
	ReasonStaticNotSuccess         = "static-validation-not-success"
	ReasonClassifierNotSuccess     = "classifier-not-success"
	ReasonUnityRequiredNotBoolean  = "unity-required-not-boolean"
	ReasonTrustedNotBoolean        = "trusted-revision-not-boolean"
	ReasonUntrustedPreflightRan    = "untrusted-preflight-not-skipped"
	ReasonUntrustedUnityRan        = "untrusted-unity-not-skipped"
	ReasonUntrustedFallbackRan     = "untrusted-fallback-not-skipped"
	ReasonUntrustedCleanupNotEmpty = "untrusted-fallback-cleanup-not-empty"
	ReasonPreflightNotSuccess      = "preflight-not-success"
	ReasonNonUnityUnityRan         = "non-unity-unity-not-skipped"
	ReasonNonUnityFallbackRan      = "non-unity-fallback-not-skipped"
	ReasonNonUnityCleanupNotEmpty  = "non-unity-fallback-cleanup-not-empty"
	ReasonUnityNotSuccess          = "unity-not-success"
	ReasonFallbackNotSuccess       = "fallback-not-success"
	ReasonFallbackCleanupNotNoop   = "fallback-cleanup-not-noop"
)

// Inputs are the gate's inputs as given (they are trimmed before any rule).
// "Empty" means exactly "" after trimming: "missing" and "none" are values.
type Inputs struct {
	StaticValidation, Classifier, UnityRequired, TrustedRevision string
	Preflight, Unity, Fallback, FallbackCleanup                  string
}

// Get returns the input named name (one of InputNames).
func (in Inputs) Get(name string) string {
	switch name {
	case InputStaticValidation:
		return in.StaticValidation
	case InputClassifier:
		return in.Classifier
	case InputUnityRequired:
		return in.UnityRequired
	case InputTrustedRevision:
		return in.TrustedRevision
	case InputPreflight:
		return in.Preflight
	case InputUnity:
		return in.Unity
	case InputFallback:
		return in.Fallback
	case InputFallbackCleanup:
		return in.FallbackCleanup
	}
	return ""
}

func (in Inputs) trimmed() Inputs {
	t := jsstr.Trim
	return Inputs{t(in.StaticValidation), t(in.Classifier), t(in.UnityRequired), t(in.TrustedRevision),
		t(in.Preflight), t(in.Unity), t(in.Fallback), t(in.FallbackCleanup)}
}

// Verdict is the gate's decision.
type Verdict struct {
	// Safe is true only for one of the three matrices.
	Safe bool
	// Reason is ReasonSafe or the code of the first rule broken.
	Reason string
	// Matrix is the accepted matrix when Safe; otherwise the matrix the
	// inputs came closest to (fewest inputs differing; on a tie the one
	// trusted-revision and unity-required select, else the earlier one in
	// Matrices).
	Matrix Matrix
	// Broken is the first input (in declaration order) that differs from
	// Matrix, with what it holds and what Matrix expects; empty when Safe.
	Broken, Got, Want string
	// Differing is how many inputs differ from Matrix.
	Differing int
}

// Message renders the verdict for the log and the job summary.
func (v Verdict) Message() string {
	if v.Safe {
		return fmt.Sprintf("Unity validation is safe: the job results form the %s matrix.", v.Matrix.Description())
	}
	return fmt.Sprintf("Unity validation is unsafe (%s): the job results come closest to the %s matrix, which %s breaks (got %s, %s); %d input(s) differ from that matrix.",
		v.Reason, v.Matrix.Description(), v.Broken, display(v.Got), v.Want, v.Differing)
}

// display renders a (non-secret) job result for a message: quoted, bounded.
func display(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

// expectation is one input's requirement in one matrix.
type expectation struct {
	ok   func(string) bool
	want string
}

func is(v string) expectation {
	want := strconv.Quote(v)
	if v == "" {
		want = "empty"
	}
	return expectation{ok: func(s string) bool { return s == v }, want: "expected " + want}
}

var anyBoolean = expectation{ok: func(s string) bool { return s == "true" || s == "false" }, want: `expected "true" or "false"`}

// matrixRows are the three accepted matrices, input by input.
var matrixRows = map[Matrix]map[string]expectation{
	MatrixUntrustedSkip: {
		InputStaticValidation: is(ResultSuccess), InputClassifier: is(ResultSuccess), InputUnityRequired: anyBoolean,
		InputTrustedRevision: is("false"), InputPreflight: is(ResultSkipped), InputUnity: is(ResultSkipped),
		InputFallback: is(ResultSkipped), InputFallbackCleanup: is(""),
	},
	MatrixNonUnitySkip: {
		InputStaticValidation: is(ResultSuccess), InputClassifier: is(ResultSuccess), InputUnityRequired: is("false"),
		InputTrustedRevision: is("true"), InputPreflight: is(ResultSuccess), InputUnity: is(ResultSkipped),
		InputFallback: is(ResultSkipped), InputFallbackCleanup: is(""),
	},
	MatrixLicensedSuccess: {
		InputStaticValidation: is(ResultSuccess), InputClassifier: is(ResultSuccess), InputUnityRequired: is("true"),
		InputTrustedRevision: is("true"), InputPreflight: is(ResultSuccess), InputUnity: is(ResultSuccess),
		InputFallback: is(ResultSuccess), InputFallbackCleanup: is(CleanupNoop),
	},
}

// EvaluateValidation applies the rules of unity-lifecycle-facts.md §7 in
// order:
//  1. static-validation-result, then classifier-result must be success,
//     then unity-required and trusted-revision each the literal true or
//     false;
//  2. trusted-revision=false: preflight, unity and fallback skipped and
//     fallback-cleanup-result empty (untrusted revision skip);
//  3. otherwise preflight success;
//  4. unity-required=false: unity and fallback skipped and
//     fallback-cleanup-result empty (audited non-Unity skip);
//  5. otherwise unity success, fallback success and fallback-cleanup-result
//     noop (licensed success).
//
// Anything else is unsafe, with the reason of the first rule broken.
func EvaluateValidation(raw Inputs) Verdict {
	in := raw.trimmed()
	reason := firstBrokenRule(in)
	if reason == ReasonSafe {
		return Verdict{Safe: true, Reason: ReasonSafe, Matrix: matchingMatrix(in)}
	}
	v := Verdict{Reason: reason}
	branch := branchMatrix(in)
	best := -1
	for _, m := range Matrices {
		n, first := distance(in, m)
		if best < 0 || n < best || (n == best && m == branch) {
			best = n
			v.Matrix, v.Broken, v.Differing = m, first, n
		}
	}
	v.Got, v.Want = in.Get(v.Broken), matrixRows[v.Matrix][v.Broken].want
	return v
}

func firstBrokenRule(in Inputs) string {
	switch {
	case in.StaticValidation != ResultSuccess:
		return ReasonStaticNotSuccess
	case in.Classifier != ResultSuccess:
		return ReasonClassifierNotSuccess
	case in.UnityRequired != "true" && in.UnityRequired != "false":
		return ReasonUnityRequiredNotBoolean
	case in.TrustedRevision != "true" && in.TrustedRevision != "false":
		return ReasonTrustedNotBoolean
	}
	if in.TrustedRevision == "false" {
		switch {
		case in.Preflight != ResultSkipped:
			return ReasonUntrustedPreflightRan
		case in.Unity != ResultSkipped:
			return ReasonUntrustedUnityRan
		case in.Fallback != ResultSkipped:
			return ReasonUntrustedFallbackRan
		case in.FallbackCleanup != "":
			return ReasonUntrustedCleanupNotEmpty
		}
		return ReasonSafe
	}
	if in.Preflight != ResultSuccess {
		return ReasonPreflightNotSuccess
	}
	if in.UnityRequired == "false" {
		switch {
		case in.Unity != ResultSkipped:
			return ReasonNonUnityUnityRan
		case in.Fallback != ResultSkipped:
			return ReasonNonUnityFallbackRan
		case in.FallbackCleanup != "":
			return ReasonNonUnityCleanupNotEmpty
		}
		return ReasonSafe
	}
	switch {
	case in.Unity != ResultSuccess:
		return ReasonUnityNotSuccess
	case in.Fallback != ResultSuccess:
		return ReasonFallbackNotSuccess
	case in.FallbackCleanup != CleanupNoop:
		return ReasonFallbackCleanupNotNoop
	}
	return ReasonSafe
}

// branchMatrix is the matrix the rules were checking when they stopped:
// the one trusted-revision and unity-required select, or "" when they are
// not booleans. It breaks ties between equally close matrices.
func branchMatrix(in Inputs) Matrix {
	switch {
	case in.TrustedRevision == "false":
		return MatrixUntrustedSkip
	case in.TrustedRevision != "true":
		return ""
	case in.UnityRequired == "false":
		return MatrixNonUnitySkip
	case in.UnityRequired == "true":
		return MatrixLicensedSuccess
	}
	return ""
}

// matchingMatrix names the matrix a safe input set forms.
func matchingMatrix(in Inputs) Matrix {
	for _, m := range Matrices {
		if n, _ := distance(in, m); n == 0 {
			return m
		}
	}
	return ""
}

// distance counts the inputs that differ from matrix m and names the first.
func distance(in Inputs, m Matrix) (int, string) {
	n, first := 0, ""
	for _, name := range InputNames {
		if !matrixRows[m][name].ok(in.Get(name)) {
			if first == "" {
				first = name
			}
			n++
		}
	}
	return n, first
}
