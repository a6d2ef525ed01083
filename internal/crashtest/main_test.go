package crashtest

import (
	"os"
	"testing"
)

// TestMain generates the App keys once for the whole binary.
func TestMain(m *testing.M) {
	setupKeys()
	os.Exit(m.Run())
}
