//go:build !linux && !windows && !darwin

package machineid

import (
	"context"
	"runtime"
)

// System returns a Reader that refuses: no machine id source is known on
// this OS.
func System() Reader {
	return ReaderFunc(func(context.Context) (Raw, error) {
		return Raw{}, &Error{Code: CodeUnavailable, Message: "read this machine's id: no machine id source is known on " + runtime.GOOS + " (Linux, Windows and macOS are supported)"}
	})
}
