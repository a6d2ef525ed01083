package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPolicyCheckExitCodes(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"policy", "check", "--lock-repository-audit", filepath.Join("..", "..")}, &out, &errOut), errOut.String())
	assert.Equal(t, 2, run(context.Background(), []string{"policy"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"policy", "check", "--nope"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"policy", "check", filepath.Join(t.TempDir(), "missing")}, &out, &errOut))
	assert.Equal(t, 0, run(context.Background(), []string{"policy", "check", t.TempDir()}, &out, &errOut), "no workflows: nothing to report")
}
