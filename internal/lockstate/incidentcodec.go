package lockstate

import "fmt"

var incidentKeys = []string{"incidentId", "repository", "workflow", "job", "runId", "runAttempt", "runUrl", "runnerId", "reportedAt", "reason", "evidenceDigest"}

func normalizeIncident(v any, lock string) (*Incident, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidIncident, fmt.Sprintf("decode lock state %q: activeIncident must be null or an object", lock))
	}
	vals := make([]string, len(incidentKeys))
	for i, k := range incidentKeys {
		s, ok := m[k].(string)
		if !ok {
			return nil, newError(CodeInvalidIncident, fmt.Sprintf("decode lock state %q: activeIncident.%s must be a string", lock, k))
		}
		vals[i] = s
	}
	return &Incident{
		IncidentID: vals[0], Repository: vals[1], Workflow: vals[2], Job: vals[3], RunID: vals[4],
		RunAttempt: vals[5], RunURL: vals[6], RunnerID: vals[7], ReportedAt: vals[8], Reason: vals[9],
		EvidenceDigest: vals[10],
	}, nil
}

func incidentNode(i *Incident) jsonObject {
	return jsonObject{
		{"incidentId", jsonString(i.IncidentID)},
		{"repository", jsonString(i.Repository)},
		{"workflow", jsonString(i.Workflow)},
		{"job", jsonString(i.Job)},
		{"runId", jsonString(i.RunID)},
		{"runAttempt", jsonString(i.RunAttempt)},
		{"runUrl", jsonString(i.RunURL)},
		{"runnerId", jsonString(i.RunnerID)},
		{"reportedAt", jsonString(i.ReportedAt)},
		{"reason", jsonString(i.Reason)},
		{"evidenceDigest", jsonString(i.EvidenceDigest)},
	}
}
