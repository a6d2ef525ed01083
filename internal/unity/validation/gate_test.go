package validation_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// in builds Inputs from the eight values in declaration order.
func in(static, classifier, unityRequired, trusted, preflight, unity, fallback, cleanup string) validation.Inputs {
	return validation.Inputs{static, classifier, unityRequired, trusted, preflight, unity, fallback, cleanup}
}

var (
	untrustedTrue  = in("success", "success", "true", "false", "skipped", "skipped", "skipped", "")
	untrustedFalse = in("success", "success", "false", "false", "skipped", "skipped", "skipped", "")
	nonUnity       = in("success", "success", "false", "true", "success", "skipped", "skipped", "")
	licensed       = in("success", "success", "true", "true", "success", "success", "success", "noop")
)

func TestValidationGateAcceptsExactlyTheThreeMatrices(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in     validation.Inputs
		matrix validation.Matrix
	}{
		"untrusted skip, classifier said Unity":    {untrustedTrue, validation.MatrixUntrustedSkip},
		"untrusted skip, classifier said no Unity": {untrustedFalse, validation.MatrixUntrustedSkip},
		"audited non-Unity skip":                   {nonUnity, validation.MatrixNonUnitySkip},
		"licensed success":                         {licensed, validation.MatrixLicensedSuccess},
		"values are trimmed":                       {in(" success ", "success\n", " true", "true ", "success", "success", "success", " noop "), validation.MatrixLicensedSuccess},
	} {
		v := validation.EvaluateValidation(tc.in)
		assert.True(t, v.Safe, name)
		assert.Equal(t, validation.ReasonSafe, v.Reason, name)
		assert.Equal(t, tc.matrix, v.Matrix, name)
		assert.Contains(t, v.Message(), tc.matrix.Description(), name)
	}
}

// TestValidationGateRejections: at least one rejection per input for every
// matrix it takes part in, each with the rule's own reason, the matrix the
// inputs came closest to and the input that broke it.
func TestValidationGateRejections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      validation.Inputs
		reason  string
		closest validation.Matrix
		broken  string
	}{
		// static-validation-result
		{"static failed (licensed)", in("failure", "success", "true", "true", "success", "success", "success", "noop"), validation.ReasonStaticNotSuccess, validation.MatrixLicensedSuccess, validation.InputStaticValidation},
		{"static skipped (untrusted)", in("skipped", "success", "true", "false", "skipped", "skipped", "skipped", ""), validation.ReasonStaticNotSuccess, validation.MatrixUntrustedSkip, validation.InputStaticValidation},
		{"static empty (non-Unity)", in("", "success", "false", "true", "success", "skipped", "skipped", ""), validation.ReasonStaticNotSuccess, validation.MatrixNonUnitySkip, validation.InputStaticValidation},
		// classifier-result
		{"classifier cancelled (licensed)", in("success", "cancelled", "true", "true", "success", "success", "success", "noop"), validation.ReasonClassifierNotSuccess, validation.MatrixLicensedSuccess, validation.InputClassifier},
		{"classifier failed (non-Unity)", in("success", "failure", "false", "true", "success", "skipped", "skipped", ""), validation.ReasonClassifierNotSuccess, validation.MatrixNonUnitySkip, validation.InputClassifier},
		{"classifier skipped (untrusted)", in("success", "skipped", "true", "false", "skipped", "skipped", "skipped", ""), validation.ReasonClassifierNotSuccess, validation.MatrixUntrustedSkip, validation.InputClassifier},
		// unity-required
		{"unity-required empty (classifier output lost)", in("success", "success", "", "true", "success", "success", "success", "noop"), validation.ReasonUnityRequiredNotBoolean, validation.MatrixLicensedSuccess, validation.InputUnityRequired},
		{"unity-required TRUE is not a literal", in("success", "success", "TRUE", "true", "success", "success", "success", "noop"), validation.ReasonUnityRequiredNotBoolean, validation.MatrixLicensedSuccess, validation.InputUnityRequired},
		{"unity-required garbage (untrusted)", in("success", "success", "maybe", "false", "skipped", "skipped", "skipped", ""), validation.ReasonUnityRequiredNotBoolean, validation.MatrixUntrustedSkip, validation.InputUnityRequired},
		{"unity-required true with a non-Unity skip", in("success", "success", "true", "true", "success", "skipped", "skipped", ""), validation.ReasonUnityNotSuccess, validation.MatrixNonUnitySkip, validation.InputUnityRequired},
		// trusted-revision
		{"trusted empty", in("success", "success", "true", "", "success", "success", "success", "noop"), validation.ReasonTrustedNotBoolean, validation.MatrixLicensedSuccess, validation.InputTrustedRevision},
		{"trusted yes", in("success", "success", "false", "yes", "success", "skipped", "skipped", ""), validation.ReasonTrustedNotBoolean, validation.MatrixNonUnitySkip, validation.InputTrustedRevision},
		{"untrusted but licensed ran", in("success", "success", "true", "false", "success", "success", "success", "noop"), validation.ReasonUntrustedPreflightRan, validation.MatrixLicensedSuccess, validation.InputTrustedRevision},
		// preflight-result
		{"untrusted preflight ran", in("success", "success", "true", "false", "success", "skipped", "skipped", ""), validation.ReasonUntrustedPreflightRan, validation.MatrixUntrustedSkip, validation.InputPreflight},
		{"preflight failed (licensed)", in("success", "success", "true", "true", "failure", "skipped", "success", "noop"), validation.ReasonPreflightNotSuccess, validation.MatrixLicensedSuccess, validation.InputPreflight},
		{"preflight skipped (non-Unity)", in("success", "success", "false", "true", "skipped", "skipped", "skipped", ""), validation.ReasonPreflightNotSuccess, validation.MatrixNonUnitySkip, validation.InputPreflight},
		{"preflight cancelled", in("success", "success", "true", "true", "cancelled", "success", "success", "noop"), validation.ReasonPreflightNotSuccess, validation.MatrixLicensedSuccess, validation.InputPreflight},
		// unity-result
		{"untrusted unity ran", in("success", "success", "true", "false", "skipped", "success", "skipped", ""), validation.ReasonUntrustedUnityRan, validation.MatrixUntrustedSkip, validation.InputUnity},
		{"non-Unity skip but unity ran", in("success", "success", "false", "true", "success", "success", "skipped", ""), validation.ReasonNonUnityUnityRan, validation.MatrixNonUnitySkip, validation.InputUnity},
		{"licensed job failed", in("success", "success", "true", "true", "success", "failure", "success", "noop"), validation.ReasonUnityNotSuccess, validation.MatrixLicensedSuccess, validation.InputUnity},
		{"licensed job skipped unexpectedly", in("success", "success", "true", "true", "success", "skipped", "success", "noop"), validation.ReasonUnityNotSuccess, validation.MatrixLicensedSuccess, validation.InputUnity},
		{"licensed job cancelled", in("success", "success", "true", "true", "success", "cancelled", "success", "noop"), validation.ReasonUnityNotSuccess, validation.MatrixLicensedSuccess, validation.InputUnity},
		// fallback-result
		{"untrusted fallback ran", in("success", "success", "true", "false", "skipped", "skipped", "success", ""), validation.ReasonUntrustedFallbackRan, validation.MatrixUntrustedSkip, validation.InputFallback},
		{"non-Unity fallback ran", in("success", "success", "false", "true", "success", "skipped", "success", ""), validation.ReasonNonUnityFallbackRan, validation.MatrixNonUnitySkip, validation.InputFallback},
		{"fallback failed", in("success", "success", "true", "true", "success", "success", "failure", "noop"), validation.ReasonFallbackNotSuccess, validation.MatrixLicensedSuccess, validation.InputFallback},
		{"fallback skipped", in("success", "success", "true", "true", "success", "success", "skipped", "noop"), validation.ReasonFallbackNotSuccess, validation.MatrixLicensedSuccess, validation.InputFallback},
		// fallback-cleanup-result
		{"untrusted cleanup missing", in("success", "success", "true", "false", "skipped", "skipped", "skipped", "missing"), validation.ReasonUntrustedCleanupNotEmpty, validation.MatrixUntrustedSkip, validation.InputFallbackCleanup},
		{"non-Unity cleanup none", in("success", "success", "false", "true", "success", "skipped", "skipped", "none"), validation.ReasonNonUnityCleanupNotEmpty, validation.MatrixNonUnitySkip, validation.InputFallbackCleanup},
		{"fallback quarantined", in("success", "success", "true", "true", "success", "success", "success", "quarantined"), validation.ReasonFallbackCleanupNotNoop, validation.MatrixLicensedSuccess, validation.InputFallbackCleanup},
		{"fallback released a leftover holder", in("success", "success", "true", "true", "success", "success", "success", "released"), validation.ReasonFallbackCleanupNotNoop, validation.MatrixLicensedSuccess, validation.InputFallbackCleanup},
		{"fallback cleanup empty", in("success", "success", "true", "true", "success", "success", "success", ""), validation.ReasonFallbackCleanupNotNoop, validation.MatrixLicensedSuccess, validation.InputFallbackCleanup},
		{"fallback lock unreachable", in("success", "success", "true", "true", "success", "success", "success", "lock-release-unreachable"), validation.ReasonFallbackCleanupNotNoop, validation.MatrixLicensedSuccess, validation.InputFallbackCleanup},
		// everything empty: the aggregate job saw nothing at all
		{"all empty", in("", "", "", "", "", "", "", ""), validation.ReasonStaticNotSuccess, validation.MatrixUntrustedSkip, validation.InputStaticValidation},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		v := validation.EvaluateValidation(tc.in)
		assert.False(t, v.Safe, tc.name)
		assert.Equal(t, tc.reason, v.Reason, tc.name)
		assert.Equal(t, tc.closest, v.Matrix, tc.name)
		assert.Equal(t, tc.broken, v.Broken, tc.name)
		assert.Contains(t, v.Message(), tc.closest.Description(), tc.name)
		assert.Contains(t, v.Message(), tc.broken, tc.name)
		assert.Contains(t, v.Message(), tc.reason, tc.name)
		covered[tc.broken] = true
	}
	for _, name := range validation.InputNames {
		assert.True(t, covered[name], "no rejection case breaks %s", name)
	}
}

// Every single-input deviation from an accepted matrix is unsafe.
func TestValidationGateRefusesEverySingleDeviation(t *testing.T) {
	t.Parallel()
	wrong := []string{"success", "failure", "cancelled", "skipped", "", "missing", "none", "true", "false", "noop", "quarantined"}
	for _, base := range []validation.Inputs{untrustedTrue, untrustedFalse, nonUnity, licensed} {
		for i, name := range validation.InputNames {
			for _, w := range wrong {
				mod := base
				setField(&mod, i, w)
				v := validation.EvaluateValidation(mod)
				if w == base.Get(name) || isAccepted(mod) {
					continue
				}
				assert.False(t, v.Safe, "%s=%q on %+v", name, w, base)
			}
		}
	}
}

func setField(in *validation.Inputs, i int, v string) {
	fields := []*string{&in.StaticValidation, &in.Classifier, &in.UnityRequired, &in.TrustedRevision, &in.Preflight, &in.Unity, &in.Fallback, &in.FallbackCleanup}
	*fields[i] = v
}

func isAccepted(x validation.Inputs) bool {
	return x == untrustedTrue || x == untrustedFalse || x == nonUnity || x == licensed
}

// Property: over a vocabulary of real job results, the gate is safe exactly
// for the four accepted input sets (two untrusted variants), and an unsafe
// verdict always names an input that really differs from its closest
// matrix.
func TestValidationGateProperty(t *testing.T) {
	t.Parallel()
	vocab := []string{"success", "failure", "cancelled", "skipped", "", "true", "false", "noop", "none"}
	rapid.Check(t, func(t *rapid.T) {
		var x validation.Inputs
		for i := range validation.InputNames {
			setField(&x, i, rapid.SampledFrom(vocab).Draw(t, fmt.Sprint("input", i)))
		}
		v := validation.EvaluateValidation(x)
		if v.Safe != isAccepted(x) {
			t.Fatalf("safe=%v for %+v", v.Safe, x)
		}
		if !v.Safe && (v.Broken == "" || v.Differing < 1 || v.Got != x.Get(v.Broken)) {
			t.Fatalf("unsafe verdict without a broken input: %+v", v)
		}
	})
}
