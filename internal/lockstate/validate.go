package lockstate

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// validateState checks every invariant that is visible on a normalized
// State: the per-field rules 15-17 and the cross-entry rules 18-19 of spec
// §2.3, plus shape rules an in-memory State could break (reservations below
// schema 4, an incident below schema 5). origin is the GITHUB_SERVER_URL
// origin an incident runUrl must use; "" accepts any valid origin (Encode
// cannot know the server).
func validateState(s *State, origin string) error {
	fail := func(code Code, format string, args ...any) error {
		return newError(code, fmt.Sprintf("validate lock state %q: ", s.Lock)+fmt.Sprintf(format, args...))
	}
	if s.Lock == "" {
		return fail(CodeInvalidLockName, "lock name is empty")
	}
	if s.SchemaVersion < 1 {
		return fail(CodeUnsupportedSchema, "schema %d is unsupported; expected an integer from 1 through %d", s.SchemaVersion, MaxSchemaVersion)
	}
	if s.SchemaVersion > MaxSchemaVersion {
		return fail(CodeNewerSchema, "schema %d is newer than supported schema %d; upgrade this build lock client", s.SchemaVersion, MaxSchemaVersion)
	}
	if !validUTF8(s.Lock, s.UpdatedAt) {
		return fail(CodeInvalidState, "lock or updatedAt is not valid UTF-8")
	}
	if s.SchemaVersion < 4 && len(s.Reservations) > 0 {
		return fail(CodeInvalidState, "reservations require schema 4, state is schema %d", s.SchemaVersion)
	}
	if s.SchemaVersion < 5 && s.ActiveIncident != nil {
		return fail(CodeInvalidState, "an active incident requires schema 5, state is schema %d", s.SchemaVersion)
	}
	if err := validateFencing(s); err != nil {
		return err
	}
	if err := validateRecentArrivals(s); err != nil {
		return err
	}
	if err := validateRecentHolds(s); err != nil {
		return err
	}
	if err := validateSeatState(s); err != nil {
		return err
	}
	if err := validateMachineIDs(s); err != nil {
		return err
	}
	holderIDs := map[string]bool{}
	holderRunners := map[string]string{}
	for i, h := range s.Holders {
		if err := validateEntry(s, h.Entry, "holder", i); err != nil {
			return err
		}
		if err := checkTimestamps(s.Lock, "holder", i, h.HolderID, "acquiredAt", h.AcquiredAt, "expiresAt", h.ExpiresAt); err != nil {
			return err
		}
		if holderIDs[h.HolderID] {
			return fail(CodeDuplicateHolder, "holders contain holderId %q more than once", h.HolderID)
		}
		holderIDs[h.HolderID] = true
		if s.SchemaVersion >= 3 {
			if other, ok := holderRunners[h.RunnerID]; ok {
				return fail(CodeRunnerConflict, "multiple active holders on one runnerId %q (%s and %s)", h.RunnerID, other, h.HolderID)
			}
			holderRunners[h.RunnerID] = h.HolderID
		}
	}
	queueIDs := map[string]bool{}
	for i, e := range s.Queue {
		if err := validateEntry(s, e, "queue entry", i); err != nil {
			return err
		}
		if s.SchemaVersion >= 3 && queueIDs[e.HolderID] {
			return fail(CodeDuplicateQueueEntry, "queue contains holderId %q more than once", e.HolderID)
		}
		queueIDs[e.HolderID] = true
	}
	resIDs := map[string]bool{}
	resRunners := map[string]string{}
	for i, r := range s.Reservations {
		if err := validateReservation(r, i); err != nil {
			return fail(CodeInvalidReservation, "%s", err)
		}
		if resIDs[r.ReservationID] {
			return fail(CodeDuplicateReservation, "reservationId %q appears more than once", r.ReservationID)
		}
		resIDs[r.ReservationID] = true
		if other, ok := resRunners[r.RunnerID]; ok {
			return fail(CodeRunnerConflict, "reservations %s and %s are both on runnerId %q", other, r.ReservationID, r.RunnerID)
		}
		resRunners[r.RunnerID] = r.ReservationID
		if holder, ok := holderRunners[r.RunnerID]; ok {
			return fail(CodeRunnerConflict, "runnerId %q is both held by %s and reserved by %s", r.RunnerID, holder, r.ReservationID)
		}
	}
	if s.ActiveIncident != nil {
		if err := validateIncident(s.ActiveIncident, origin); err != nil {
			return fail(CodeInvalidIncident, "%s", err)
		}
	}
	return nil
}

// validateFencing checks the schema-6 fields: below schema 6 they must be
// zero (they could not be written); at schema 6 the counter is in range,
// every holder token is in 1..counter and unique (rules 20-22), and every
// queue entry's overtakes is in range (rule 23).
func validateFencing(s *State) error {
	fail := func(code Code, format string, args ...any) error {
		return newError(code, fmt.Sprintf("validate lock state %q: ", s.Lock)+fmt.Sprintf(format, args...))
	}
	for i, h := range s.Holders {
		if h.Overtakes != 0 {
			return fail(CodeInvalidState, "holder %d (%s) carries overtakes %d; only queue entries count overtakes", i, h.HolderID, h.Overtakes)
		}
	}
	if s.SchemaVersion < FencedSchemaVersion {
		if s.FencingToken != 0 {
			return fail(CodeInvalidState, "a fencing counter requires schema %d, state is schema %d", FencedSchemaVersion, s.SchemaVersion)
		}
		for i, h := range s.Holders {
			if h.FencingToken != 0 {
				return fail(CodeInvalidState, "holder %d (%s) carries a fencing token, which requires schema %d; state is schema %d", i, h.HolderID, FencedSchemaVersion, s.SchemaVersion)
			}
		}
		for i, e := range s.Queue {
			if e.Overtakes != 0 {
				return fail(CodeInvalidState, "queue entry %d (%s) carries overtakes, which requires schema %d; state is schema %d", i, e.HolderID, FencedSchemaVersion, s.SchemaVersion)
			}
		}
		return nil
	}
	if s.FencingToken < 0 || s.FencingToken > MaxFencingToken {
		return fail(CodeInvalidFencingToken, "fencingToken %d is outside 0..%d", s.FencingToken, MaxFencingToken)
	}
	tokens := make(map[int64]string, len(s.Holders))
	for i, h := range s.Holders {
		if h.FencingToken < 1 || h.FencingToken > MaxFencingToken {
			return fail(CodeInvalidFencingToken, "holder %d (%s) fencingToken %d is outside 1..%d", i, h.HolderID, h.FencingToken, MaxFencingToken)
		}
		if h.FencingToken > s.FencingToken {
			return fail(CodeFencingTokenAhead, "holder %d (%s) fencingToken %d is ahead of the issued counter %d; the counter must never go backwards", i, h.HolderID, h.FencingToken, s.FencingToken)
		}
		if other, dup := tokens[h.FencingToken]; dup {
			return fail(CodeDuplicateFencingToken, "holders %s and %s share fencingToken %d", other, h.HolderID, h.FencingToken)
		}
		tokens[h.FencingToken] = h.HolderID
	}
	for i, e := range s.Queue {
		if e.Overtakes < 0 || int64(e.Overtakes) > MaxFencingToken {
			return fail(CodeInvalidOvertakes, "queue entry %d (%s) overtakes %d is outside 0..%d", i, e.HolderID, e.Overtakes, MaxFencingToken)
		}
	}
	return nil
}

func validateEntry(s *State, e Entry, kind string, i int) error {
	if e.HolderID == "" {
		return newError(CodeInvalidEntry, fmt.Sprintf("validate lock state %q: %s %d has an empty holderId", s.Lock, kind, i))
	}
	if !validUTF8(e.HolderID, e.Repository, e.Workflow, e.Job, e.RunID, e.RunAttempt, e.RunURL, e.QueuedAt, e.RunnerID, e.JobID) {
		return newError(CodeInvalidState, fmt.Sprintf("validate lock state %q: %s %d is not valid UTF-8", s.Lock, kind, i))
	}
	if e.PendingRunnerID != "" && (s.SchemaVersion >= 3 || kind != "queue entry") {
		return newError(CodeInvalidState, fmt.Sprintf("validate lock state %q: %s %d (%s) carries a pendingRunnerId, which only a schema-2 queue entry may carry", s.Lock, kind, i, e.HolderID))
	}
	if s.SchemaVersion >= 3 && (e.RunnerID == "" || jsTrim(e.RunnerID) != e.RunnerID) {
		return newError(CodeMissingRunnerID, fmt.Sprintf("validate lock state %q: %s %d (%s) needs a trimmed non-empty runnerId at schema %d", s.Lock, kind, i, e.HolderID, s.SchemaVersion))
	}
	if e.JobID != "" && !isCanonicalPositiveDecimal(e.JobID) {
		return newError(CodeInvalidJobID, fmt.Sprintf("validate lock state %q: %s %d (%s) has an invalid numeric Actions job ID", s.Lock, kind, i, e.HolderID))
	}
	if err := checkRunnerIdentity(s.Lock, kind, i, e); err != nil {
		return err
	}
	return checkTimestamps(s.Lock, kind, i, e.HolderID, "queuedAt", e.QueuedAt)
}

// validateReservation implements normalizeReservation's checks (spec §2.2).
func validateReservation(r Reservation, i int) error {
	if !validUTF8(r.ReservationID, r.HolderID, r.Repository, r.Workflow, r.Job, r.RunID, r.RunAttempt, r.RunURL, r.RunnerID, r.Reason, r.State, r.CreatedAt, r.AvailableAt) {
		return fmt.Errorf("reservation %d is not valid UTF-8", i)
	}
	if r.ReservationID == "" || jsTrim(r.ReservationID) != r.ReservationID {
		return fmt.Errorf("reservation %d needs a trimmed non-empty reservationId", i)
	}
	required := []struct{ name, value string }{
		{"holderId", r.HolderID}, {"repository", r.Repository}, {"workflow", r.Workflow}, {"job", r.Job},
		{"runId", r.RunID}, {"runAttempt", r.RunAttempt}, {"runUrl", r.RunURL}, {"reason", r.Reason},
	}
	for _, f := range required {
		if f.value == "" {
			return fmt.Errorf("reservation %s has an empty %s", r.ReservationID, f.name)
		}
	}
	if r.RunnerID == "" || jsTrim(r.RunnerID) != r.RunnerID {
		return fmt.Errorf("reservation %s needs a trimmed non-empty runnerId", r.ReservationID)
	}
	created, ok := ParseStateTime(r.CreatedAt)
	if !ok {
		return fmt.Errorf("reservation %s has createdAt %q, which is not a canonical ISO-8601 UTC timestamp", r.ReservationID, clip(r.CreatedAt, 40))
	}
	switch r.State {
	case ReservationCooldown:
		available, ok := ParseStateTime(r.AvailableAt)
		if !ok {
			return fmt.Errorf("reservation %s has availableAt %q, which is not a canonical ISO-8601 UTC timestamp", r.ReservationID, clip(r.AvailableAt, 40))
		}
		if !available.After(created) {
			return fmt.Errorf("reservation %s requires availableAt after createdAt", r.ReservationID)
		}
	case ReservationQuarantine:
		if r.AvailableAt != "" {
			return fmt.Errorf("quarantine reservation %s must not have availableAt", r.ReservationID)
		}
	default:
		return fmt.Errorf("reservation %s has invalid state %q", r.ReservationID, r.State)
	}
	return nil
}

var (
	incidentIDPattern = regexp.MustCompile(`^incident-[a-f0-9]{24}$`)
	repositoryPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
)

// validateIncident implements normalizeIncident's checks (spec §2.2).
func validateIncident(inc *Incident, origin string) error {
	if !validUTF8(inc.IncidentID, inc.Repository, inc.Workflow, inc.Job, inc.RunID, inc.RunAttempt, inc.RunURL, inc.RunnerID, inc.ReportedAt, inc.Reason, inc.EvidenceDigest) {
		return fmt.Errorf("incident is not valid UTF-8")
	}
	if !incidentIDPattern.MatchString(inc.IncidentID) {
		return fmt.Errorf("incidentId %q does not match incident-<24 hex>", inc.IncidentID)
	}
	if !validRepository(inc.Repository) {
		return fmt.Errorf("incident %s has an invalid repository", inc.IncidentID)
	}
	if inc.Workflow == "" || inc.Job == "" {
		return fmt.Errorf("incident %s needs a workflow and a job", inc.IncidentID)
	}
	if !isCanonicalPositiveDecimal(inc.RunID) || !isCanonicalPositiveDecimal(inc.RunAttempt) {
		return fmt.Errorf("incident %s needs canonical runId and runAttempt", inc.IncidentID)
	}
	suffix := "/" + inc.Repository + "/actions/runs/" + inc.RunID
	if origin != "" {
		if inc.RunURL != origin+suffix {
			return fmt.Errorf("incident %s runUrl does not equal %s", inc.IncidentID, origin+suffix)
		}
	} else {
		prefix, ok := strings.CutSuffix(inc.RunURL, suffix)
		if o, err := ServerOrigin(prefix); !ok || err != nil || o != prefix {
			return fmt.Errorf("incident %s runUrl is not <origin>%s", inc.IncidentID, suffix)
		}
	}
	if jsTrim(inc.RunnerID) == "" {
		return fmt.Errorf("incident %s needs a runnerId", inc.IncidentID)
	}
	if _, ok := ParseStateTime(inc.ReportedAt); !ok {
		return fmt.Errorf("incident %s has reportedAt %q, which is not a canonical ISO-8601 UTC timestamp", inc.IncidentID, clip(inc.ReportedAt, 40))
	}
	if inc.Reason != ReasonAccountLimit {
		return fmt.Errorf("incident %s reason must be %s", inc.IncidentID, ReasonAccountLimit)
	}
	digest := EvidenceDigest(inc.Repository, inc.Workflow, inc.Job, inc.RunID, inc.RunAttempt, inc.RunnerID, inc.Reason)
	if inc.EvidenceDigest != digest {
		return fmt.Errorf("incident %s evidenceDigest does not match its evidence", inc.IncidentID)
	}
	if inc.IncidentID != "incident-"+digest[:24] {
		return fmt.Errorf("incident %s does not match its evidence digest", inc.IncidentID)
	}
	return nil
}

func validRepository(repo string) bool {
	if !repositoryPattern.MatchString(repo) {
		return false
	}
	for _, seg := range strings.Split(repo, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// ServerOrigin validates GITHUB_SERVER_URL (an absolute http or https origin
// without credentials, path, query or fragment; "" means DefaultServerURL)
// and returns its origin as JavaScript URL.origin would: lower-case scheme
// and host, default port dropped.
func ServerOrigin(serverURL string) (string, error) {
	raw := serverURL
	if raw == "" {
		raw = DefaultServerURL
	}
	bad := func(detail string) (string, error) {
		return "", newError(CodeInvalidServerURL, "parse GITHUB_SERVER_URL: "+detail)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return bad("scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" {
		return bad("must be an absolute URL with a host")
	}
	if u.User != nil {
		return bad("must not contain credentials")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#") {
		return bad("must not contain a path, query or fragment")
	}
	host := strings.ToLower(u.Host)
	if (scheme == "https" && strings.HasSuffix(host, ":443")) || (scheme == "http" && strings.HasSuffix(host, ":80")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	if strings.ContainsAny(host, " /\\") || !validUTF8(host) {
		return bad("host is invalid")
	}
	return scheme + "://" + host, nil
}
