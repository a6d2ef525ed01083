package machineid

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestParse(t *testing.T) {
	t.Parallel()
	const hexID = "0123456789abcdef0123456789abcdef"
	want, _ := hex.DecodeString(hexID)
	cases := []struct {
		name, value string
		kind        Kind
		ok          bool
		why         string
	}{
		{"machine-id with newline", hexID + "\n", KindHex32, true, ""},
		{"machine-id without newline", hexID, KindHex32, true, ""},
		{"machine-id upper case", strings.ToUpper(hexID) + "\n", KindHex32, true, ""},
		{"uninitialized", "uninitialized\n", KindHex32, false, "first boot"},
		{"empty", "", KindHex32, false, "empty"},
		{"newline only", "\n", KindHex32, false, "empty"},
		{"two newlines", hexID + "\n\n", KindHex32, false, "32 hexadecimal"},
		{"short", hexID[:31] + "\n", KindHex32, false, "32 hexadecimal"},
		{"long", hexID + "0\n", KindHex32, false, "32 hexadecimal"},
		{"not hex", "0123456789abcdef0123456789abcdeg", KindHex32, false, "32 hexadecimal"},
		{"dashed uuid in a machine-id file", "01234567-89ab-cdef-0123-456789abcdef", KindHex32, false, "32 hexadecimal"},
		{"all zeros", strings.Repeat("0", 32) + "\n", KindHex32, false, "all zeros"},
		{"all ones", strings.Repeat("f", 32), KindHex32, false, "all ones"},
		{"guid", "01234567-89ab-cdef-0123-456789abcdef", KindUUID, true, ""},
		{"guid upper case", "01234567-89AB-CDEF-0123-456789ABCDEF", KindUUID, true, ""},
		{"guid in braces", "{01234567-89ab-cdef-0123-456789abcdef}", KindUUID, true, ""},
		{"guid with spaces around", " 01234567-89ab-cdef-0123-456789abcdef\r\n", KindUUID, true, ""},
		{"guid without dashes", hexID, KindUUID, false, "not a UUID"},
		{"urn guid", "urn:uuid:01234567-89ab-cdef-0123-456789abcdef", KindUUID, false, "not a UUID"},
		{"guid empty", "", KindUUID, false, "empty"},
		{"guid bad digit", "01234567-89ab-cdef-0123-456789abcdeg", KindUUID, false, "not a UUID"},
		{"nil guid", "00000000-0000-0000-0000-000000000000", KindUUID, false, "all zeros"},
		{"all-F guid", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", KindUUID, false, "all ones"},
		{"SMBIOS placeholder", "03000200-0400-0500-0006-000700080009", KindUUID, false, "placeholder SMBIOS"},
		{"unknown kind", hexID, Kind(9), false, "unknown kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id, err := Parse(Raw{Source: "src", Kind: c.kind, Value: []byte(c.value)})
			if c.ok {
				require.NoError(t, err)
				assert.Equal(t, want, id[:])
				return
			}
			require.Error(t, err)
			assert.Equal(t, CodeUnavailable, codeOf(err))
			assert.Contains(t, err.Error(), c.why)
			assert.Contains(t, err.Error(), "src")
			if len(c.value) > 8 && c.name != "uninitialized" { // a literal, not an id
				assert.NotContains(t, err.Error(), strings.TrimSpace(c.value), "the raw value never appears in a message")
			}
		})
	}
}

func TestDeriveKnownAnswers(t *testing.T) {
	t.Parallel()
	// Computed independently: Python's hmac.new(key, b"buildlock-machine-v1:<repo>", sha256).hexdigest()[:32].
	id, err := Parse(Raw{Kind: KindHex32, Value: []byte("0123456789abcdef0123456789abcdef\n")})
	require.NoError(t, err)
	assert.Equal(t, "281662d565eaa12e6c7e388d59d097bb", Derive(id, 123456789))
	id, err = Parse(Raw{Kind: KindUUID, Value: []byte("5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B")})
	require.NoError(t, err)
	assert.Equal(t, "156cfdcf8d8da6a332d0aab72a9726eb", Derive(id, 1))
}

func TestDeriveProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
		repo := rapid.Int64Range(1, 1<<40).Draw(t, "repo")
		other := rapid.Int64Range(1, 1<<40).Filter(func(o int64) bool { return o != repo }).Draw(t, "other")
		h := Derive(id, repo)
		if len(h) != 32 || strings.ToLower(h) != h {
			t.Fatalf("hash %q is not 32 lowercase hex digits", h)
		}
		if _, err := hex.DecodeString(h); err != nil {
			t.Fatalf("hash %q is not hex", h)
		}
		if Derive(id, repo) != h {
			t.Fatal("not deterministic")
		}
		if Derive(id, other) == h {
			t.Fatalf("repositories %d and %d get the same hash", repo, other)
		}
		raw := hex.EncodeToString(id[:])
		if strings.Contains(h, raw[:16]) || strings.Contains(h, raw[16:]) {
			t.Fatal("the hash shows half the raw id")
		}
		// The same machine read from either shape hashes alike: a Linux
		// file and a GUID of the same 16 bytes name the same machine.
		u := raw[:8] + "-" + raw[8:12] + "-" + raw[12:16] + "-" + raw[16:20] + "-" + raw[20:]
		a, errA := Parse(Raw{Kind: KindHex32, Value: []byte(raw + "\n")})
		b, errB := Parse(Raw{Kind: KindUUID, Value: []byte(strings.ToUpper(u))})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("the shapes disagree on validity: %v / %v", errA, errB)
		}
		if errA == nil && a != b {
			t.Fatal("the shapes decode to different ids")
		}
	})
}

func TestForRepository(t *testing.T) {
	t.Parallel()
	good := ReaderFunc(func(context.Context) (Raw, error) {
		return Raw{Source: "/etc/machine-id", Kind: KindHex32, Value: []byte("0123456789abcdef0123456789abcdef\n")}, nil
	})
	id, err := ForRepository(context.Background(), good, 123456789)
	require.NoError(t, err)
	assert.Equal(t, ID{Hash: "281662d565eaa12e6c7e388d59d097bb", Source: "/etc/machine-id"}, id)

	read := false
	spy := ReaderFunc(func(context.Context) (Raw, error) { read = true; return Raw{}, nil })
	for _, repo := range []int64{0, -1} {
		_, err = ForRepository(context.Background(), spy, repo)
		assert.Equal(t, CodeInvalidRepository, codeOf(err))
	}
	assert.False(t, read, "an invalid repository id reads nothing")

	cause := errors.New("access denied")
	_, err = ForRepository(context.Background(), ReaderFunc(func(context.Context) (Raw, error) { return Raw{}, cause }), 1)
	assert.Equal(t, CodeUnavailable, codeOf(err))
	assert.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "the operating system")

	placeholder := ReaderFunc(func(context.Context) (Raw, error) {
		return Raw{Source: "ioreg", Kind: KindUUID, Value: []byte("03000200-0400-0500-0006-000700080009")}, nil
	})
	_, err = ForRepository(context.Background(), placeholder, 1)
	assert.Equal(t, CodeUnavailable, codeOf(err))
}

// fakeFS is the Linux files of one machine.
type fakeFS map[string]any // []byte content or error

func (f fakeFS) ReadFile(p string) ([]byte, error) {
	switch v := f[p].(type) {
	case nil:
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	case error:
		return nil, v
	default:
		return []byte(v.(string)), nil
	}
}

func TestFilesFallback(t *testing.T) {
	t.Parallel()
	const a, b = "0123456789abcdef0123456789abcdef\n", "fedcba9876543210fedcba9876543210\n"
	denied := &fs.PathError{Op: "open", Path: EtcMachineID, Err: fs.ErrPermission}
	cases := []struct {
		name       string
		files      fakeFS
		source     string // "" = refused
		refusalHas string
	}{
		{"etc", fakeFS{EtcMachineID: a, DBusMachineID: b}, EtcMachineID, ""},
		{"etc missing: dbus", fakeFS{DBusMachineID: b}, DBusMachineID, ""},
		{"etc empty: dbus", fakeFS{EtcMachineID: "", DBusMachineID: b}, DBusMachineID, ""},
		{"etc blank line: dbus", fakeFS{EtcMachineID: "\n", DBusMachineID: b}, DBusMachineID, ""},
		{"etc uninitialized: refused, not fallen back from", fakeFS{EtcMachineID: "uninitialized\n", DBusMachineID: b}, "", "first boot"},
		{"etc malformed: refused, not fallen back from", fakeFS{EtcMachineID: "garbage\n", DBusMachineID: b}, "", "32 hexadecimal"},
		{"etc unreadable: refused", fakeFS{EtcMachineID: denied, DBusMachineID: b}, "", "cannot be read"},
		{"both missing", fakeFS{}, "", "no file holds an id"},
		{"both empty", fakeFS{EtcMachineID: "", DBusMachineID: ""}, "", "no file holds an id"},
		{"dbus zeros", fakeFS{DBusMachineID: strings.Repeat("0", 32)}, "", "all zeros"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Files{Paths: []string{EtcMachineID, DBusMachineID}, ReadFile: c.files.ReadFile}
			id, err := ForRepository(context.Background(), r, 42)
			if c.source != "" {
				require.NoError(t, err)
				assert.Equal(t, c.source, id.Source)
				return
			}
			require.Error(t, err)
			assert.Equal(t, CodeUnavailable, codeOf(err))
			assert.Contains(t, err.Error(), c.refusalHas)
		})
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := Registry{Get: func() (string, error) { return "5d2f8e7a-1c3b-4e6f-9a0b-7c8d9e0f1a2b", nil }}
	id, err := ForRepository(context.Background(), r, 1)
	require.NoError(t, err)
	assert.Equal(t, ID{Hash: "156cfdcf8d8da6a332d0aab72a9726eb", Source: RegistrySource}, id)

	cause := errors.New("The system cannot find the file specified.")
	_, err = ForRepository(context.Background(), Registry{Get: func() (string, error) { return "", cause }}, 1)
	assert.Equal(t, CodeUnavailable, codeOf(err))
	assert.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), RegistrySource)
}

// ioregOutput is the shape of `ioreg -rd1 -c IOPlatformExpertDevice` on a
// Mac (abridged; ids made up).
const ioregOutput = `+-o J316sAP  <class IOPlatformExpertDevice, id 0x100000227, registered, matched, active, busy 0 (4 ms), retain 37>
    {
      "IOPolledInterface" = "AppleARMWatchdogTimerHibernateHandler is not serializable"
      "#address-cells" = <02000000>
      "IOPlatformSerialNumber" = "C02XXXXXXXXX"
      "compatible" = <"J316sAP","MacBookPro18,1","AppleARM">
      "IOPlatformUUID" = "5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B"
      "model" = <"MacBookPro18,1">
    }
`

func TestIOReg(t *testing.T) {
	t.Parallel()
	run := func(out string, err error) IOReg {
		return IOReg{Run: func(context.Context) ([]byte, error) { return []byte(out), err }}
	}
	id, err := ForRepository(context.Background(), run(ioregOutput, nil), 1)
	require.NoError(t, err)
	assert.Equal(t, ID{Hash: "156cfdcf8d8da6a332d0aab72a9726eb", Source: IORegSource}, id, "the Windows and macOS shapes of one id hash alike")

	cases := []struct{ name, out, why string }{
		{"no property", strings.ReplaceAll(ioregOutput, "IOPlatformUUID", "IOPlatformOther"), "no IOPlatformUUID"},
		{"empty output", "", "no IOPlatformUUID"},
		{"two different", ioregOutput + `      "IOPlatformUUID" = "00000000-1111-2222-3333-444444444444"` + "\n", "more than one"},
		{"property inside another value", `"x" = "\"IOPlatformUUID\" = \"5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B\""`, "no IOPlatformUUID"},
		{"zeros", strings.ReplaceAll(ioregOutput, "5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B", "00000000-0000-0000-0000-000000000000"), "all zeros"},
		{"SMBIOS placeholder", strings.ReplaceAll(ioregOutput, "5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B", "03000200-0400-0500-0006-000700080009"), "placeholder"},
	}
	for _, c := range cases {
		_, err := ForRepository(context.Background(), run(c.out, nil), 1)
		assert.Equal(t, CodeUnavailable, codeOf(err), c.name)
		assert.ErrorContains(t, err, c.why, c.name)
	}
	dup := ioregOutput + `      "IOPlatformUUID" = "5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B"` + "\n"
	_, err = ForRepository(context.Background(), run(dup, nil), 1)
	assert.NoError(t, err, "the same property printed twice is one id")

	cause := errors.New("exit status 1")
	_, err = ForRepository(context.Background(), run("", cause), 1)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, CodeUnavailable, codeOf(err))
}

func FuzzParse(f *testing.F) {
	f.Add(byte(KindHex32), []byte("0123456789abcdef0123456789abcdef\n"))
	f.Add(byte(KindUUID), []byte("{5D2F8E7A-1C3B-4E6F-9A0B-7C8D9E0F1A2B}"))
	f.Add(byte(KindHex32), []byte("uninitialized\n"))
	f.Fuzz(func(t *testing.T, kind byte, value []byte) {
		id, err := Parse(Raw{Source: "fuzz", Kind: Kind(kind), Value: value})
		if err != nil {
			if codeOf(err) != CodeUnavailable {
				t.Fatalf("refusal without the reason code: %v", err)
			}
			return
		}
		if id == [16]byte{} || id == allOnes {
			t.Fatal("accepted a placeholder")
		}
		if _, ok := placeholders[hex.EncodeToString(id[:])]; ok {
			t.Fatal("accepted a placeholder")
		}
	})
}

func FuzzParseIOReg(f *testing.F) {
	f.Add([]byte(ioregOutput))
	f.Add([]byte(`"IOPlatformUUID" = ""`))
	f.Fuzz(func(t *testing.T, out []byte) {
		v, err := ParseIOReg(out)
		if err != nil {
			if codeOf(err) != CodeUnavailable {
				t.Fatalf("refusal without the reason code: %v", err)
			}
			return
		}
		if strings.ContainsAny(string(v), "\"\n") {
			t.Fatalf("value %q spans a quote or a line", v)
		}
	})
}
