package lockstate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// EvidenceDigest returns the lowercase hex SHA-256 of the compact
// JSON.stringify({repository, workflow, job, runId, runAttempt, runnerId,
// reason}) in that key order, with JavaScript escaping (no HTML escaping,
// raw U+2028/U+2029), exactly as the reference computes it.
func EvidenceDigest(repository, workflow, job, runID, runAttempt, runnerID, reason string) string {
	doc := jsonObject{
		{"repository", jsonString(repository)},
		{"workflow", jsonString(workflow)},
		{"job", jsonString(job)},
		{"runId", jsonString(runID)},
		{"runAttempt", jsonString(runAttempt)},
		{"runnerId", jsonString(runnerID)},
		{"reason", jsonString(reason)},
	}
	sum := sha256.Sum256([]byte(stringifyCompact(doc)))
	return hex.EncodeToString(sum[:])
}

// IncidentFor builds the schema-5 account incident a blocked release raises
// for the caller identity (the reference incidentFromIdentity). runUrl is
// recomputed from serverURL so it always passes validation; reportedAt is
// now. It fails with CodeInvalidIncident when the identity cannot form a
// valid incident (for example a non-canonical run attempt).
func IncidentFor(id Identity, now time.Time, serverURL string) (*Incident, error) {
	origin, err := ServerOrigin(serverURL)
	if err != nil {
		return nil, err
	}
	runner := jsTrim(id.RunnerID)
	digest := EvidenceDigest(id.Repository, id.Workflow, id.Job, id.RunID, id.RunAttempt, runner, ReasonAccountLimit)
	inc := &Incident{
		IncidentID:     "incident-" + digest[:24],
		Repository:     id.Repository,
		Workflow:       id.Workflow,
		Job:            id.Job,
		RunID:          id.RunID,
		RunAttempt:     id.RunAttempt,
		RunURL:         origin + "/" + id.Repository + "/actions/runs/" + id.RunID,
		RunnerID:       runner,
		ReportedAt:     FormatTime(now),
		Reason:         ReasonAccountLimit,
		EvidenceDigest: digest,
	}
	if err := validateIncident(inc, origin); err != nil {
		return nil, newError(CodeInvalidIncident, fmt.Sprintf("build account incident: %v", err))
	}
	return inc, nil
}
