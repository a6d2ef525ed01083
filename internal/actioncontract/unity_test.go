package actioncontract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classify"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/preflight"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/requirevalidation"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/validatelicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// TestHostedUnityActionsMatchTheirBinaries ties the Registry (and so each
// action.yml) to the input and output names the binaries use.
func TestHostedUnityActionsMatchTheirBinaries(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]struct{ inputs, outputs []string }{
		"check-unity-runner-availability": {
			[]string{preflight.InputReaderAppID, preflight.InputReaderAppPrivateKey, preflight.InputOwner, preflight.InputRequiredLabelSets},
			[]string{preflight.OutputRegisteredRunnerCount, preflight.OutputMatchedRunners, preflight.OutputOnlineRunnerCount, preflight.OutputBusyRunnerCount},
		},
		"classify-unity-changes": {
			[]string{classifychanges.InputEventName, classifychanges.InputBaseSHA, classifychanges.InputHeadSHA, classifychanges.InputIndependentPaths},
			[]string{classifychanges.OutputUnityRequired},
		},
		"require-unity-validation": {validation.InputNames, []string{requirevalidation.OutputValidationSafe}},
		"validate-unity-license": {
			[]string{validatelicense.InputActivationMode},
			[]string{validatelicense.OutputSerialPresent, validatelicense.OutputEmailPresent, validatelicense.OutputPasswordPresent},
		},
	} {
		reg := actioncontract.Registry[dir]
		assert.ElementsMatch(t, want.inputs, reg.Inputs, dir)
		assert.ElementsMatch(t, want.outputs, reg.Outputs, dir)
	}
	// Every mode an action passes to cmd/classify exists in its table.
	for dir, reg := range actioncontract.Registry {
		if reg.Binary == "classify" {
			if assert.Len(t, reg.Args, 1, dir) {
				assert.Contains(t, classify.Modes, reg.Args[0], dir)
			}
		} else {
			assert.Empty(t, reg.Args, "%s: only the classify family takes a mode argument", dir)
		}
	}
}
