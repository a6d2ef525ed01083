//go:build windows

package machineid

import (
	"golang.org/x/sys/windows/registry"
)

// System returns the machine id Reader of this OS: the MachineGuid value
// of HKLM\SOFTWARE\Microsoft\Cryptography, from the 64-bit view (a 32-bit
// process would otherwise be redirected to WOW6432Node, where the value
// does not exist). Never run by this project's tests (docs/machine-queue.md).
func System() Reader {
	return Registry{Get: func() (string, error) {
		k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\Cryptography`, registry.QUERY_VALUE|registry.WOW64_64KEY)
		if err != nil {
			return "", err
		}
		defer k.Close()
		v, _, err := k.GetStringValue("MachineGuid")
		return v, err
	}}
}
