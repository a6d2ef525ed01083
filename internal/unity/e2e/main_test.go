package e2e_test

import (
	"os"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
)

// TestMain lets this test binary act as the fake editor, and generates the
// App key once.
func TestMain(m *testing.M) {
	fakeeditor.Dispatch()
	actiontest.Setup()
	os.Exit(m.Run())
}
