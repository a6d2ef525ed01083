package machineid

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"regexp"
	"strings"
)

// Linux machine id files, in the order Files reads them.
const (
	EtcMachineID  = "/etc/machine-id"
	DBusMachineID = "/var/lib/dbus/machine-id"
)

// Files reads a systemd/D-Bus machine id from the first of Paths that
// exists and is not empty; ReadFile reads one (os.ReadFile in
// production). A later path is tried only when the earlier one is missing
// or empty (machine-id(5): an empty /etc/machine-id is filled at boot);
// any other content of the first file decides, valid or not, so that
// every agent on the machine reads the same source.
type Files struct {
	Paths    []string
	ReadFile func(path string) ([]byte, error)
}

// Read implements Reader.
func (f Files) Read(context.Context) (Raw, error) {
	var tried []error
	for _, p := range f.Paths {
		data, err := f.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			tried = append(tried, errors.New(p+": missing"))
			continue
		case err != nil:
			return Raw{Source: p}, unavailable(p, "the file cannot be read", err)
		case len(bytes.TrimSpace(data)) == 0:
			tried = append(tried, errors.New(p+": empty"))
			continue
		}
		return Raw{Source: p, Kind: KindHex32, Value: data}, nil
	}
	return Raw{}, unavailable(strings.Join(f.Paths, " and "), "no file holds an id (run systemd-machine-id-setup, or bind-mount the host's /etc/machine-id into a runner container)", errors.Join(tried...))
}

// Registry reads Windows' MachineGuid through Get, which returns the
// string value HKLM\SOFTWARE\Microsoft\Cryptography\MachineGuid.
type Registry struct {
	Get func() (string, error)
}

// RegistrySource names the Windows source in messages.
const RegistrySource = `HKLM\SOFTWARE\Microsoft\Cryptography\MachineGuid`

// Read implements Reader.
func (r Registry) Read(context.Context) (Raw, error) {
	v, err := r.Get()
	if err != nil {
		return Raw{Source: RegistrySource}, unavailable(RegistrySource, "the registry value cannot be read", err)
	}
	return Raw{Source: RegistrySource, Kind: KindUUID, Value: []byte(v)}, nil
}

// IOReg reads macOS' IOPlatformUUID from the output of Run, which runs
// IORegCommand and returns its standard output.
type IOReg struct {
	Run func(ctx context.Context) ([]byte, error)
}

// IORegCommand is the command IOReg's Run runs on macOS.
var IORegCommand = []string{"/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice"}

// IORegSource names the macOS source in messages.
const IORegSource = "IOPlatformUUID (/usr/sbin/ioreg -rd1 -c IOPlatformExpertDevice)"

// Read implements Reader.
func (r IOReg) Read(ctx context.Context) (Raw, error) {
	out, err := r.Run(ctx)
	if err != nil {
		return Raw{Source: IORegSource}, unavailable(IORegSource, "ioreg failed", err)
	}
	v, err := ParseIOReg(out)
	if err != nil {
		return Raw{Source: IORegSource}, err
	}
	return Raw{Source: IORegSource, Kind: KindUUID, Value: v}, nil
}

// ioregLine matches the property line of ioreg's text output:
//
//	"IOPlatformUUID" = "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX"
var ioregLine = regexp.MustCompile(`(?m)^[ \t|]*"IOPlatformUUID" = "([^"\n]*)"[ \t]*$`)

// ParseIOReg returns the value of the one IOPlatformUUID property in
// ioreg's text output. None, or two that differ, is CodeUnavailable.
func ParseIOReg(out []byte) ([]byte, error) {
	ms := ioregLine.FindAllSubmatch(out, -1)
	if len(ms) == 0 {
		return nil, unavailable(IORegSource, "ioreg printed no IOPlatformUUID property", nil)
	}
	for _, m := range ms[1:] {
		if !bytes.Equal(m[1], ms[0][1]) {
			return nil, unavailable(IORegSource, "ioreg printed more than one, different IOPlatformUUID", nil)
		}
	}
	return ms[0][1], nil
}
