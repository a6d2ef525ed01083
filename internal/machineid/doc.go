// Package machineid gives the physical machine's stable id, hashed for one
// lock repository, so that every runner agent on one machine presents the
// same id to the organization lock (issue 26) while the raw id never
// reaches the state and two organizations cannot correlate their machines.
//
// Sources, by operating system (docs/machine-queue.md, "Machine identity"):
//
//   - Linux: /etc/machine-id, falling back to /var/lib/dbus/machine-id
//     when the first is missing or empty (machine-id(5)). The literal
//     "uninitialized" (systemd's first boot in progress: the id is about
//     to change) and anything malformed are refused, not fallen back from.
//   - Windows: HKLM\SOFTWARE\Microsoft\Cryptography, value MachineGuid, read
//     from the 64-bit registry view also by a 32-bit process.
//   - macOS: IOPlatformUUID, read from the output of /usr/sbin/ioreg -rd1 -c
//     IOPlatformExpertDevice. IOKit itself needs cgo
//     (IORegistryEntryCreateCFProperty), and the binaries are built with
//     CGO_ENABLED=0 and cross-compiled; ioreg is part of every macOS
//     install and prints the same property. The absolute path keeps PATH
//     out of it.
//
// Each source is a small Reader; the OS-specific wiring lives behind build
// tags (System), and the parsing, validation and hashing rules are plain
// functions tested on every OS with fake readers.
//
// Validation refuses, with reason code machine-id-unavailable: an empty
// value, a value of the wrong shape, all zeros, all ones (0xFF…), and the
// well-known placeholder ids: systemd's "uninitialized", and the SMBIOS
// UUID 03000200-0400-0500-0006-000700080009 that many boards ship unset
// and that a macOS IOPlatformUUID inherits on such hardware. Error
// messages never contain the raw id (machine-id(5) asks that it be kept
// confidential).
//
// Hashing (ForRepository): HMAC-SHA-256 keyed with the 16 bytes of the
// machine id over "buildlock-machine-v1:" and the repository's numeric id,
// truncated to 128 bits, as 32 lowercase hex digits: the derivation
// systemd's sd_id128_get_machine_app_specific uses for the same reason.
// The raw id is the key, so the hash of one repository tells nothing about
// the hash of another.
package machineid
