package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	ps, err := parseTemplate(`a-${{ matrix.x }}-${{ 'y}}' }}z`)
	require.NoError(t, err)
	require.Len(t, ps, 5)
	assert.Equal(t, "a-", ps[0].lit)
	assert.Equal(t, "matrix.x", render(ps[1].expr))
	assert.Equal(t, "-", ps[2].lit)
	assert.Equal(t, "'y}}'", render(ps[3].expr), "a }} inside a string literal does not end the expression")
	assert.Equal(t, "z", ps[4].lit)
	_, err = parseTemplate("${{ github.token ")
	assert.Error(t, err)
	_, err = parseTemplate("${{ ( }}")
	assert.Error(t, err)
}

func TestConditionIsStructural(t *testing.T) {
	t.Parallel()
	acq := &step{id: "Acquire"}
	for _, src := range []string{
		"${{ always() && steps.acquire.outputs.acquired == 'true' }}",
		"always() && steps.acquire.outputs.acquired == 'true'",
		"  ${{ steps.acquire.outputs.acquired == 'TRUE' && always() }}  ",
		"${{ ALWAYS() && 'true' == steps['acquire'].outputs.acquired }}",
		"${{always()&&steps.Acquire.outputs.acquired=='true'}}",
	} {
		s := &step{hasIf: true}
		s.ifExpr, s.ifOK = condition(src)
		assert.True(t, alwaysAndAcquired(s, acq), src)
	}
	for _, src := range []string{
		"${{ always() }} && ${{ steps.acquire.outputs.acquired == 'true' }}", // a string template: always truthy
		"${{ always() || steps.acquire.outputs.acquired == 'true' }}",
		"${{ always() && steps.acquire.outputs.acquired == 'false' }}",
		"${{ always() && steps.acquire.outputs.acquired != 'true' }}",
		"${{ always() && steps.other.outputs.acquired == 'true' }}",
		"${{ always() && steps.acquire.outputs.acquired == 'true' && github.ref == 'x' }}",
		"${{ always(1) && steps.acquire.outputs.acquired == 'true' }}",
		"always() && steps.acquire.outputs.acquired",
		"",
	} {
		s := &step{hasIf: src != ""}
		s.ifExpr, s.ifOK = condition(src)
		assert.False(t, alwaysAndAcquired(s, acq), src)
	}
}

func TestEvalProfileMapping(t *testing.T) {
	t.Parallel()
	e := singleExpr(`${{ matrix.test-mode == 'standalone' && 'StandaloneWindowsIl2Cpp' || 'EditorOnly' }}`)
	require.NotNil(t, e)
	for mode, want := range map[string]string{"editmode": "EditorOnly", "playmode": "EditorOnly", "standalone": "StandaloneWindowsIl2Cpp", "STANDALONE": "StandaloneWindowsIl2Cpp"} {
		v, err := eval(e, map[string]string{"matrix.test-mode": mode})
		require.NoError(t, err)
		assert.Equal(t, want, v.s, mode)
	}
	_, err := eval(singleExpr(`${{ contains(matrix.test-mode, 'x') }}`), map[string]string{"matrix.test-mode": "x"})
	assert.ErrorIs(t, err, errNotEvaluable)
	_, err = eval(singleExpr(`${{ github.ref }}`), nil)
	assert.ErrorIs(t, err, errNotEvaluable)
	v, err := eval(singleExpr(`${{ !(1 == '1') || null }}`), nil)
	require.NoError(t, err)
	assert.False(t, v.truthy(), "loose equality coerces '1' to 1; || of two falsy values is the right one")
}

func TestParseUses(t *testing.T) {
	t.Parallel()
	u := parseUses("Ambiguous-Interactive/ambiguous-organization-build-lock/.github/actions/acquire-build-lock@0000000000000000000000000000000000000000")
	assert.Equal(t, usesRemote, u.kind)
	assert.Equal(t, ActAcquire, u.lockName())
	assert.True(t, u.pinned())
	assert.False(t, parseUses("actions/checkout@v4").pinned())
	assert.False(t, parseUses("actions/checkout@0123456789ABCDEF0123456789ABCDEF01234567").pinned(), "a commit pin is lowercase hex")
	assert.False(t, parseUses("actions/checkout@0123456").pinned(), "a short sha is a ref, not a pin")
	assert.True(t, parseUses("o/r/.github/workflows/x.yml@0000000000000000000000000000000000000000").isWorkflow())
	assert.False(t, parseUses("o/r/.github/workflows/sub/x.yml@v1").isWorkflow())
	assert.Equal(t, usesLocal, parseUses("./.github/actions/x").kind)
	assert.Equal(t, ".github/actions/x", parseUses("./.github/actions/x/").path)
	assert.Equal(t, usesInvalid, parseUses("./../outside").kind)
	assert.Equal(t, usesInvalid, parseUses("no-ref").kind)
	assert.False(t, parseUses("docker://alpine:3").pinned())
	assert.True(t, parseUses("docker://alpine@sha256:"+"a"+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde").pinned())
	assert.True(t, parseUses("game-ci/unity-builder@v4").isGameCIUnity())
}
