package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// edit is one text replacement of the corpus consumer workflow; old must
// occur exactly once.
type edit struct{ old, new string }

func mutated(t *testing.T, base string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		require.Equal(t, 1, strings.Count(base, e.old), "edit text must occur exactly once:\n%s", e.old)
		base = strings.Replace(base, e.old, e.new, 1)
	}
	return base
}

// parityCase is a mutation of the consumer workflow and the codes the
// analyzer must report for it (none: it must stay clean).
type parityCase struct {
	name  string
	edits []edit
	want  []policy.Code
}

func runParity(t *testing.T, cases []parityCase) {
	t.Helper()
	base := consumerWorkflow(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := policy.Analyze(snapshotOf(map[string]string{wfPath: mutated(t, base, tc.edits...)}), basePolicy())
			want := tc.want
			if want == nil {
				want = []policy.Code{}
			}
			got := res.Codes()
			if got == nil {
				got = []policy.Code{}
			}
			assert.Equal(t, want, got, "findings: %+v", res.Findings)
		})
	}
}

// TestCleanupGateOptionalInputs: reservation-state, reservation-id and
// incident-id are optional inputs of require-confirmed-unity-cleanup (the
// reference requires only the other ten); when given they must be bound
// to release's outputs of the same name.
func TestCleanupGateOptionalInputs(t *testing.T) {
	t.Parallel()
	const (
		state    = "          reservation-state: ${{ steps.release.outputs.reservation-state }}\n"
		id       = "          reservation-id: ${{ steps.release.outputs.reservation-id }}\n"
		incident = "          incident-id: ${{ steps.release.outputs.incident-id }}\n"
	)
	runParity(t, []parityCase{
		{"all three omitted", []edit{{state + id + incident, ""}}, nil},
		{"incident-id omitted", []edit{{incident, ""}}, nil},
		{"reservation-id omitted", []edit{{id, ""}}, nil},
		{"reservation-state bound elsewhere", []edit{{state, "          reservation-state: ${{ steps.release.outputs.released }}\n"}},
			[]policy.Code{policy.CleanupGateInputsNotTyped}},
		{"incident-id a literal", []edit{{incident, "          incident-id: none\n"}}, []policy.Code{policy.CleanupGateInputsNotTyped}},
		{"a required input omitted", []edit{{"          released: ${{ steps.release.outputs.released }}\n", ""}},
			[]policy.Code{policy.CleanupGateInputsNotTyped}},
		{"an unknown input", []edit{{incident, incident + "          extra: x\n"}}, []policy.Code{policy.CleanupGateInputsNotTyped}},
	})
}
