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
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"policy", "check", t.TempDir()}, &out, &errOut), "no workflows: nothing was checked")
	assert.Contains(t, errOut.String(), "0 workflows checked")
	out.Reset()
	errOut.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"policy", "check", filepath.Join("..", "..", "docs", "examples")}, &out, &errOut), errOut.String())
	assert.Contains(t, errOut.String(), "1 workflows checked, 0 findings")
}
