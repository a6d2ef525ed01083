//go:build darwin

package signature

import (
	"context"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/proc"
)

// OSVerifier returns the codesign verifier on macOS, else nil.
func OSVerifier(goos string) Verifier {
	if goos != "darwin" {
		return nil
	}
	return codesign{teamID: UnityTeamID}
}

type codesign struct{ teamID string }

// Verify runs codesign on the Mach-O at path; the verdict is its exit
// status (0 = satisfies the requirement), never its output.
func (c codesign) Verify(ctx context.Context, path string) (*Verified, error) {
	args, err := CodesignArgs(c.teamID, path)
	if err != nil {
		return nil, err
	}
	res, err := proc.Run(ctx, proc.Spec{Path: CodesignPath, Args: args, Timeout: VerifyTimeout, Grace: 5 * time.Second, OutputCap: 1 << 20}, nil)
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "run codesign: %v", err)
	}
	if !res.Completed || res.TimedOut || res.Signaled || res.ExitCode != 0 {
		return nil, refuse(ReasonInvalid, CodeInvalid, "codesign refused the editor (exit %d): it does not satisfy the Unity designated requirement", res.ExitCode)
	}
	return &Verified{}, nil
}
