package prhead_test

import (
	"os"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
)

func TestMain(m *testing.M) {
	actiontest.Setup()
	os.Exit(m.Run())
}
