package liveness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

const boot = "0f6b4d3c-2a1e-4c5b-9d8e-7f6a5b4c3d2e"

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// Field 22 (starttime) is 8812345; the command name holds ") (" and spaces.
	line := "4242 (we ird) (name) S 1 4242 4242 0 -1 4194560 318 0 0 0 1 0 0 0 20 0 1 0 8812345 2330624 213 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
	st, err := parseProcStat([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, procStat{State: 'S', StartTicks: 8812345}, st)
	assert.False(t, st.exited())

	zombie := "77 (sh) Z 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
	st, err = parseProcStat([]byte(zombie))
	require.NoError(t, err)
	assert.True(t, st.exited())

	for _, bad := range []string{"", "1 sh S 1", "1 (sh S 1", "1 (sh) S 1 2 3", "1 (sh) S 1 4242 4242 0 -1 4194560 318 0 0 0 1 0 0 0 20 0 1 0 x 1 2"} {
		_, err := parseProcStat([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (we ird) (name) S 1 4242 4242 0 -1 4194560 318 0 0 0 1 0 0 0 20 0 1 0 8812345 2330624 213"))
	f.Add([]byte("1 ()) Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseProcStat(data)
		if err != nil {
			assert.Equal(t, procStat{}, st)
		}
	})
}

func TestLinuxToken(t *testing.T) {
	t.Parallel()
	tok := linuxToken(boot, 4026531836, 8812345)
	assert.Equal(t, "linux:"+boot+":4026531836:8812345", tok)
	assert.LessOrEqual(t, len(tok), machinequeue.MaxStartBytes)
	b, ns, ticks, ok := parseLinuxToken(tok)
	require.True(t, ok)
	assert.Equal(t, boot, b)
	assert.Equal(t, uint64(4026531836), ns)
	assert.Equal(t, uint64(8812345), ticks)
	for _, bad := range []string{"", "linux:" + boot + ":1", "darwin:1.000001", "linux:" + boot + ":01:5", "linux:XYZ:1:5", "linux:" + boot + ":1:-5"} {
		_, _, _, ok := parseLinuxToken(bad)
		assert.False(t, ok, bad)
	}
	ns, ok = parseNamespaceLink("pid:[4026531836]")
	assert.True(t, ok)
	assert.Equal(t, uint64(4026531836), ns)
	for _, bad := range []string{"net:[4026531836]", "pid:[]", "pid:[12", "pid:[0x1]"} {
		_, ok := parseNamespaceLink(bad)
		assert.False(t, ok, bad)
	}
	assert.Equal(t, "darwin:1700000000.000042", darwinToken(1700000000, 42))
	assert.Equal(t, "windows:133500000000000000", windowsToken(133500000000000000))
}

func TestJudge(t *testing.T) {
	t.Parallel()
	rec := linuxToken(boot, 7, 100)
	other := "1b6b4d3c-2a1e-4c5b-9d8e-7f6a5b4c3d2e"
	cases := []struct {
		name    string
		myBoot  string
		myNS    uint64
		nsKnown bool
		v       view
		want    machinequeue.Verdict
	}{
		{"same start, running", boot, 7, true, view{current: rec}, machinequeue.VerdictAlive},
		{"pid reused by a later process", boot, 7, true, view{current: linuxToken(boot, 7, 101)}, machinequeue.VerdictDead},
		{"zombie", boot, 7, true, view{current: rec, exited: true}, machinequeue.VerdictDead},
		{"no such pid", boot, 7, true, view{gone: true}, machinequeue.VerdictDead},
		{"not readable and not proven gone", boot, 7, true, view{}, machinequeue.VerdictUnknown},
		{"an earlier boot", other, 7, true, view{current: rec}, machinequeue.VerdictDead},
		{"another pid namespace", boot, 8, true, view{gone: true}, machinequeue.VerdictUnknown},
		{"own namespace unreadable", boot, 0, false, view{gone: true}, machinequeue.VerdictUnknown},
		{"own boot id unreadable", "", 7, true, view{gone: true}, machinequeue.VerdictUnknown},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, judgeLinux(rec, tc.myBoot, tc.myNS, tc.nsKnown, tc.v), tc.name)
	}
	assert.Equal(t, machinequeue.VerdictUnknown, judgeLinux("windows:5", boot, 7, true, view{gone: true}), "a token of another OS")

	win := windowsToken(5)
	assert.Equal(t, machinequeue.VerdictAlive, judgeOS("windows:", win, view{current: win}))
	assert.Equal(t, machinequeue.VerdictDead, judgeOS("windows:", win, view{current: windowsToken(6)}))
	assert.Equal(t, machinequeue.VerdictDead, judgeOS("windows:", win, view{current: win, exited: true}), "an exited process whose handle someone keeps")
	assert.Equal(t, machinequeue.VerdictDead, judgeOS("windows:", win, view{gone: true}))
	assert.Equal(t, machinequeue.VerdictUnknown, judgeOS("windows:", win, view{}), "access denied")
	assert.Equal(t, machinequeue.VerdictUnknown, judgeOS("darwin:", win, view{gone: true}), "a token of another OS")
	dar := darwinToken(1, 2)
	assert.Equal(t, machinequeue.VerdictAlive, judgeOS("darwin:", dar, view{current: dar}))
}

func TestSystemRefusesPidZero(t *testing.T) {
	t.Parallel()
	assert.Equal(t, machinequeue.VerdictUnknown, System{}.Probe(machinequeue.Process{PID: 0, Start: "x"}))
}
