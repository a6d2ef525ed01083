package evidence_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
)

var serialTokenRE = regexp.MustCompile(`(?i)\bSC-[A-Za-z0-9-]{8,}\b`)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		creds      []string
		want       string
	}{
		{"password and email", "login dev@studio.test with p4ssw0rd!", []string{"dev@studio.test", "p4ssw0rd!"}, "login [REDACTED] with [REDACTED]"},
		{"longest first", "pw=hunter22", []string{"hunter2", "hunter22"}, "pw=[REDACTED]"},
		{"every occurrence", "x1x1x1", []string{"x1"}, "[REDACTED][REDACTED][REDACTED]"},
		{"empty credential ignored", "abc", []string{"", "b"}, "a[REDACTED]c"},
		{"serial", "serial number: SC-ABCD-EFGH-1234", nil, "serial number: [REDACTED]"},
		{"serial case-insensitive", "sc-abcdefgh.", nil, "[REDACTED]."},
		{"serial needs 8 characters", "SC-ABCDEFG", nil, "SC-ABCDEFG"},
		{"serial needs a word boundary before", "XSC-ABCDEFGH", nil, "XSC-ABCDEFGH"},
		{"serial backtracks to a word boundary", "SC-ABCDEFGH-", nil, "[REDACTED]-"},
		{"credentials before serials", "SC-PASSWORD1", []string{"PASSWORD1"}, "SC-[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, evidence.Redact(tt.text, tt.creds...))
		})
	}
}

func TestDecodeText(t *testing.T) {
	t.Parallel()
	s, err := evidence.DecodeText([]byte("\xEF\xBB\xBFhello\n"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", s, "one BOM stripped")
	s, err = evidence.DecodeText([]byte("\xEF\xBB\xBF\xEF\xBB\xBFx"))
	require.NoError(t, err)
	assert.Equal(t, "\ufeffx", s, "only one BOM stripped")
	_, err = evidence.DecodeText([]byte("a\x00b"))
	assert.ErrorIs(t, err, evidence.ErrNUL)
	_, err = evidence.DecodeText([]byte("a\xffb"))
	assert.ErrorIs(t, err, evidence.ErrInvalidUTF8)
}

func TestDigests(t *testing.T) {
	t.Parallel()
	// sha256("") and a hand-computed frame: the digest is over the framed set.
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", evidence.FileDigest(nil))
	assert.Equal(t, evidence.FileDigest([]byte("return\x00log\x00")), evidence.Digest([]byte("log"), nil))
	assert.Equal(t, evidence.FileDigest([]byte("return\x00log\x00supplemental-000\x00a\x00supplemental-001\x00b\x00")),
		evidence.Digest([]byte("log"), [][]byte{[]byte("a"), []byte("b")}))
	assert.NotEqual(t, evidence.Digest([]byte("ab"), nil), evidence.Digest([]byte("a"), [][]byte{[]byte("b")}))
	assert.True(t, evidence.ValidDigest(evidence.ZeroDigest))
	assert.False(t, evidence.ValidDigest("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"))
}

func TestPathNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "unity-return-12-3-unity-tests", evidence.DirName("12", "3", "unity-tests"))
	s, ok := evidence.ParseDirName("unity-return-12-3-unity-tests", "12", "3")
	assert.True(t, ok)
	assert.Equal(t, "unity-tests", s)
	for _, bad := range []string{"unity-return-12-4-x", "unity-return-12-3-", "unity-return-12-3-.x", "unity-return-12-3-a/b", "unity-return-121-3-x"} {
		_, ok := evidence.ParseDirName(bad, "12", "3")
		assert.False(t, ok, bad)
	}
	for _, good := range []string{"1", "42", "9007199254740993"} {
		assert.True(t, evidence.ValidRunNumber(good), good)
	}
	for _, bad := range []string{"", "0", "01", "-1", "1 ", "1a"} {
		assert.False(t, evidence.ValidRunNumber(bad), bad)
	}
	assert.True(t, evidence.ValidSuffix("default"))
	assert.False(t, evidence.ValidSuffix("a"+string(make([]byte, 64))))
	assert.Equal(t, "d.consuming-0123", evidence.ClaimedName("d", "0123"))
	assert.True(t, evidence.ValidNonce("0123456789abcdef0123456789abcdef"))
}

func TestRedactFastPathAgreesWithTheRegexp(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "-", "c-", "sc-", "xSc-ABCDEFGH", "a-b-c sC-12345678 d", "s\u00e7-ABCDEFGH", "S-C-ABCDEFGH"} {
		want := serialTokenRE.ReplaceAllLiteralString(s, evidence.Redacted)
		assert.Equal(t, want, evidence.Redact(s), "%q", s)
	}
}
