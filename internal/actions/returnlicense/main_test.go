package returnlicense_test

import (
	"os"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
)

// TestMain lets this test binary act as the fake editor.
func TestMain(m *testing.M) {
	fakeeditor.Dispatch()
	os.Exit(m.Run())
}
