package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMachineQueueOverhead is the machine-queue line of make bench (issue
// 26): per acquire + release, the file operations machine-slots adds and
// its wall time as a ratio of an organization admission, with its PASS/FAIL
// targets (MachineMaxRatio of MachineGitHubAdmission, MachineMaxWrites).
func TestMachineQueueOverhead(t *testing.T) {
	cycles := 40
	if raceEnabled || testing.Short() {
		cycles = 5
	}
	res, err := RunMachine(t, cycles)
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Writes, float64(MachineMaxWrites), "an uncontended cycle writes queue.json twice")
	if os.Getenv("BENCH_JSON") == "1" {
		b, _ := json.MarshalIndent(struct {
			Machine *MachineResult `json:"machine_queue_overhead"`
		}{res}, "", "  ")
		fmt.Println(string(b))
		return
	}
	verdict := "PASS"
	if !res.Pass() {
		verdict = "FAIL"
	}
	fmt.Printf("machine-queue overhead (machine-slots 2, uncontended, real files and liveness, %d cycles, medians):\n", res.Cycles)
	fmt.Printf("  file operations per acquire + release: %.2f exclusive locks, %.2f reads of queue.json, %.2f fsync'd renames (target <= %d writes)\n",
		res.Locks, res.Reads, res.Writes, MachineMaxWrites)
	fmt.Printf("  acquire %.2f ms without, %.2f ms with; release %.2f ms without, %.2f ms with (in-process emulator, no network)\n",
		res.AdmissionMS, res.WithMachineMS, res.ReleaseMS, res.ReleaseMachineMS)
	fmt.Printf("  machine queue alone (take + release): %.2f ms = %.2f x the emulator's admission, %.3f x a %s GitHub admission (3 requests); target <= %.2f: %s\n",
		res.QueueMS, res.RatioEmulator, res.RatioGitHub, MachineGitHubAdmission, MachineMaxRatio, verdict)
}
