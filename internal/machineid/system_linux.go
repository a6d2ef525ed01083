//go:build linux

package machineid

import "os"

// System returns the machine id Reader of this OS: /etc/machine-id, then
// /var/lib/dbus/machine-id.
func System() Reader {
	return Files{Paths: []string{EtcMachineID, DBusMachineID}, ReadFile: os.ReadFile}
}
