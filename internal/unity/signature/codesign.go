package signature

import (
	"fmt"
	"strconv"
)

// CodesignPath is Apple's code-signing tool; never looked up in PATH.
const CodesignPath = "/usr/bin/codesign"

// DesignatedRequirement is the requirement the editor's Mach-O must satisfy
// (facts §1): Apple's anchor, a Developer ID leaf and intermediate, and the
// reviewed Unity team identifier.
func DesignatedRequirement(teamID string) string {
	return "anchor apple generic and certificate leaf[field.1.2.840.113635.100.6.1.13] and " +
		"certificate 1[field.1.2.840.113635.100.6.2.6] and certificate leaf[subject.OU] = " + strconv.Quote(teamID)
}

// CodesignArgs are the arguments of the verification. A -R argument that
// starts with "=" is requirement text rather than a file path (csreq(1),
// "Specifying requirements", the format codesign's -R accepts:
// https://man.cameronkatri.com/csreq.1).
func CodesignArgs(teamID, machO string) ([]string, error) {
	if teamID == "" {
		return nil, refuse(ReasonDarwinNotApproved, 0, "no reviewed Unity team identifier is configured; read it from a real installed editor with codesign -dv --verbose=4 and review it before enabling macOS")
	}
	if machO == "" || machO[0] != '/' {
		return nil, fmt.Errorf("codesign target must be an absolute path")
	}
	return []string{"--verify", "--strict", "--deep", "-R", "=" + DesignatedRequirement(teamID), machO}, nil
}
