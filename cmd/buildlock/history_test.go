package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHistoryCommandDispatch: `buildlock history` is in the subcommand
// table, its subcommands take --help (exit 0), and a usage error exits 2
// with the reason on stderr.
func TestHistoryCommandDispatch(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"history", "verify", "--help"}, {"history", "report", "-h"}, {"history", "--help"}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, run(context.Background(), args, &out, &errOut), "%v", args)
		assert.Contains(t, out.String()+errOut.String(), "usage: buildlock history", "%v", args)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"history"}, &out, &errOut))
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"history", "verify", "--repo", "not-a-repo"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--repo must be OWNER/REPO")
	var help bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"help"}, &help, &errOut))
	assert.Contains(t, help.String(), "history    verify every past state")
}
