package actionio_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

func TestPrintlnNeverStartsAWorkflowCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	a := actionio.New(func(string) string { return "" }, &out)
	a.Println("holder x\n::add-mask::s3cret\r\n::error::pwned 100%")
	a.Printf("%s", "::stop-commands::token")
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2, "one line per call, whatever the value contains")
	assert.Equal(t, "holder x%0A::add-mask::s3cret%0D%0A::error::pwned 100%25", lines[0])
	assert.Equal(t, "  ::stop-commands::token", lines[1])
}

func TestErrorCodeCarriesTheReasonInTheTitle(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	a := actionio.New(func(string) string { return "" }, &out)
	a.ErrorCode("duplicate-holder", "two\nlines")
	a.ErrorCode("odd:code,x", "m")
	assert.Equal(t, "::error title=duplicate-holder::two lines\n::error title=odd%3Acode%2Cx::m\n", out.String())
}

func TestSetOutputsIsAllOrNothing(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	a := actionio.New(func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return path
		}
		return ""
	}, &bytes.Buffer{})
	err := a.SetOutputs([][2]string{{"acquired", "true"}, {"holder-id", "x_GitHubActionsFileCommandDelimeter_\nacquired<<EOF"}})
	require.Error(t, err)
	data, _ := os.ReadFile(path)
	assert.Empty(t, data, "a refused value writes no output at all")
	require.Error(t, a.SetOutputs([][2]string{{"ok", "1"}, {"bad name", "2"}}))
	data, _ = os.ReadFile(path)
	assert.Empty(t, data)

	require.NoError(t, a.SetOutputs([][2]string{{"acquired", "true"}, {"holder-id", "multi\nline"}}))
	got, err := actionio.ReadFileCommands(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"acquired": "true", "holder-id": "multi\nline"}, got)
	assert.Equal(t, []string{"acquired", "holder-id"}, a.OutputsWritten())
}
