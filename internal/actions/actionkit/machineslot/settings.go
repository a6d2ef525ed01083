package machineslot

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
)

// InputMachineSlots is K, the machine-slots input of acquire and
// acquire-with-cleanup: 1-64, empty (the default) turns the machine queue
// off.
const InputMachineSlots = "machine-slots"

// EnvMachineDir names the machine queue directory (an absolute path);
// unset means filestore.DefaultDir of the OS.
const EnvMachineDir = "BUILD_LOCK_MACHINE_DIR"

// CodeDirInvalid is the reason code of a BUILD_LOCK_MACHINE_DIR that is
// not an absolute path.
const CodeDirInvalid = "machine-dir-invalid"

// Settings are the machine queue settings of one acquire.
type Settings struct {
	// Slots is K (0: off).
	Slots int
	// Dir is the machine queue directory ("" when off).
	Dir string
}

// On reports whether the job takes a machine slot.
func (s Settings) On() bool { return s.Slots > 0 }

// Parse reads machine-slots (both input spellings, through in) and, when
// it is set, BUILD_LOCK_MACHINE_DIR, appending every problem to p.
func Parse(getenv func(string) string, in *actionio.IO, p *edgesettings.Problems) Settings {
	slots, err := in.PositiveIntMax(InputMachineSlots, 0, mq.MaxSlots)
	if err != nil {
		p.Add(err)
		return Settings{}
	}
	if slots == 0 {
		return Settings{}
	}
	dir := strings.TrimSpace(getenv(EnvMachineDir))
	if dir == "" {
		dir = filestore.DefaultDir(runtime.GOOS, getenv("ProgramData"))
	}
	if !filepath.IsAbs(dir) {
		p.Add(&Error{Code: CodeDirInvalid, Message: fmt.Sprintf("%s must be an absolute path (the machine queue directory every runner agent of the machine shares; docs/machine-queue.md)", EnvMachineDir)})
		return Settings{}
	}
	return Settings{Slots: slots, Dir: filepath.Clean(dir)}
}

// Error is a refusal of this package with a stable reason code
// (lockaction.Reasoned).
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error returns the message (with the cause).
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonCode returns the stable reason code.
func (e *Error) ReasonCode() string { return e.Code }
