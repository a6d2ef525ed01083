package lockstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// MaxSchemaVersion is the newest state schema this package reads and writes.
// A document with a larger integer schemaVersion fails closed with
// CodeNewerSchema. Raising it (schema 7) means: new State fields, a new
// branch in decodeState, validateState and stableState, a 6 -> 7 step in
// migrate.go gated by a config flag, golden files, and docs/state-schema.md.
const MaxSchemaVersion = 6

// FencedSchemaVersion is the first schema with fencing tokens and bounded
// overtaking (config fencedAdmission).
const FencedSchemaVersion = 6

// MaxFencingToken is the largest fencing token (and overtakes count) a
// state may hold: JavaScript's Number.MAX_SAFE_INTEGER, so every value
// survives a JavaScript JSON round trip exactly.
const MaxFencingToken int64 = 1<<53 - 1

// DefaultSchemaVersion is the schema a missing state file starts at and the
// schema schema-1 documents are normalized to on read.
const DefaultSchemaVersion = 2

// DefaultServerURL is GITHUB_SERVER_URL when the environment leaves it unset.
const DefaultServerURL = "https://github.com"

// Reservation states.
const (
	// ReservationCooldown is a reservation that expires at AvailableAt.
	ReservationCooldown = "cooldown"
	// ReservationQuarantine is a reservation that never expires on its own.
	ReservationQuarantine = "quarantine"
)

// State is the normalized lock state document locks/<lock>.json.
//
// A State returned by Decode or by a transition is valid: Encode accepts it
// and Decode(Encode(s)) equals it. Holders and Queue are never nil;
// Reservations is non-nil exactly when SchemaVersion >= 4. Fields that do not
// exist at the state's schema (RunnerID below 3, the fencing fields below 6)
// are empty or zero.
type State struct {
	SchemaVersion  int
	Lock           string
	Holders        []Holder
	Queue          []Entry
	Reservations   []Reservation // schema >= 4
	ActiveIncident *Incident     // schema >= 5 (nil = JSON null)
	// FencingToken (schema >= 6) is the last fencing token issued, 0 before
	// the first admission. It never decreases: every admission increments it
	// and stamps the new holder with the result; no other transition
	// changes it.
	FencingToken int64
	// Seats (schema 6 with named seats) records, per seat, the runner that
	// last took it and when (seat affinity). Written as seats, after
	// fencingToken, omitted when empty.
	Seats []SeatUse
	// RecentArrivals (every schema, optional; issue 23) logs the first
	// writes of the last ArrivalLogWindow (or longer: they leave lowest
	// ticket first, LiveArrivals) with their arrival tickets
	// (arrivals.go). Written as recentArrivals, before updatedAt, omitted
	// when empty.
	RecentArrivals []RecentArrival
	// RecentHolds (every schema, optional; issue 23) logs how long the
	// last few jobs used their seats, from their notice to their release
	// (holds.go). Written as recentHolds, after recentArrivals, omitted
	// when empty.
	RecentHolds []RecentHold
	UpdatedAt   string // as read; Encode writes what is in it
}

// Entry is one queued request. The identity fields are strings exactly as
// stored; RunnerID is set only at schema >= 3 and JobID only when proven.
type Entry struct {
	HolderID   string
	Repository string
	Workflow   string
	Job        string
	RunID      string
	RunAttempt string
	RunURL     string
	QueuedAt   string
	RunnerID   string
	JobID      string
	// RunnerName, RunnerOS and RunnerArch (every schema, optional) record
	// the runner the acquiring process really ran on: the runner's own
	// RUNNER_NAME, RUNNER_OS and RUNNER_ARCH, which every step receives, as
	// opposed to the caller-supplied RunnerID. They tell two jobs of one run
	// attempt that share a holderId apart (matrix legs left at the default
	// holder-id-suffix), so the second is refused instead of being taken for
	// the first's retry. Written only when known; the JavaScript reference
	// and older Go builds ignore them and drop them on their next rewrite,
	// after which the entry simply has no recorded runner (see
	// docs/state-schema.md).
	RunnerName string
	RunnerOS   string
	RunnerArch string
	// MachineID (every schema, optional; issue 26) is the hashed id of the
	// machine the acquiring process ran on, written as machineId when set
	// (machine.go, serialKeys).
	MachineID string
	// PendingRunnerID (schema 2 queue entries only, optional) is the
	// runnerId the entry takes when a pending upgrade to schema >= 3 lands
	// (Upgrade): this port records it while the config asks for runner
	// serialization and the lock still has something to drain, so the
	// waiter keeps its queue position across the upgrade. Written as
	// pendingRunnerId; the JavaScript reference drops it on its next
	// rewrite, after which the entry's own job records it again.
	PendingRunnerID string
	// Overtakes (schema >= 6, queue entries only) counts the admissions that
	// passed this waiting entry while it was blocked. At cfg.MaxOvertakes
	// the entry becomes a barrier: nothing behind it is admitted by the
	// scan until it is admitted or leaves. Always 0 in a Holder.
	Overtakes int
	// Seat, Labels and Priority (schema 6, issue 25): the named seat a
	// holder took (seat), the waiter's sorted label set joined by commas
	// ("" = any seat; written as the array labels) and its priority class
	// (0..MaxPriority, written only when not 0). See seatcodec.go.
	Seat     string
	Labels   string
	Priority int
}

// Holder is an admitted entry occupying one slot until ExpiresAt (a lease
// hint for the reaper: holding is not guaranteed to be safe after it, and
// nothing but the reaper removes an expired holder).
type Holder struct {
	Entry
	AcquiredAt string
	ExpiresAt  string
	// FencingToken (schema >= 6) is the token this admission was issued:
	// unique among holders, in 1..State.FencingToken. A later admission of
	// the same holderId (after a release) gets a larger token, so the token
	// tells which admission is current.
	FencingToken int64
}

// Reservation (schema >= 4) keeps a slot occupied after its holder left:
// a cooldown until AvailableAt, or a quarantine until recovered.
type Reservation struct {
	ReservationID string
	HolderID      string
	Repository    string
	Workflow      string
	Job           string
	RunID         string
	RunAttempt    string
	RunURL        string
	RunnerID      string
	Reason        string
	State         string // ReservationCooldown or ReservationQuarantine
	CreatedAt     string
	AvailableAt   string // cooldown only
	// Seat (schema 6) is the named seat the reservation keeps out of
	// service: the seat of the holder it replaced. Written as seat, last,
	// omitted when empty.
	Seat string
	// MachineID (issue 26, optional) is the machineId of the holder the
	// reservation replaced; written before seat, omitted when empty.
	MachineID string
}

// Incident (schema 5) is the single immutable global account incident that
// blocks every admission until an operator recovers it.
type Incident struct {
	IncidentID     string
	Repository     string
	Workflow       string
	Job            string
	RunID          string
	RunAttempt     string
	RunURL         string
	RunnerID       string
	ReportedAt     string
	Reason         string
	EvidenceDigest string
}

// DecodeOptions parameterizes Decode.
type DecodeOptions struct {
	// Lock is the expected lock name; the document's lock must equal it.
	Lock string
	// ServerURL is GITHUB_SERVER_URL; its origin must prefix an incident's
	// runUrl. Empty means DefaultServerURL.
	ServerURL string
	// Now fills the reference's read-time defaults (queuedAt and acquiredAt
	// of legacy entries that lack them). Zero leaves them empty; Decode never
	// reads a clock.
	Now time.Time
}

// Empty returns the state a missing file means: schema 2, no holders, no
// queue.
func Empty(lock string) *State {
	return &State{SchemaVersion: DefaultSchemaVersion, Lock: lock, Holders: []Holder{}, Queue: []Entry{}}
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	if s == nil {
		return nil
	}
	c := *s
	c.Holders = append([]Holder{}, s.Holders...)
	c.Queue = append([]Entry{}, s.Queue...)
	if s.Reservations != nil || s.SchemaVersion >= 4 {
		c.Reservations = append([]Reservation{}, s.Reservations...)
	}
	if s.ActiveIncident != nil {
		inc := *s.ActiveIncident
		c.ActiveIncident = &inc
	}
	c.Seats = slices.Clone(s.Seats)
	c.RecentArrivals = slices.Clone(s.RecentArrivals)
	c.RecentHolds = slices.Clone(s.RecentHolds)
	return &c
}

// canonicalize makes the slice shapes of s match what Decode produces.
func (s *State) canonicalize() {
	if s.Holders == nil {
		s.Holders = []Holder{}
	}
	if s.Queue == nil {
		s.Queue = []Entry{}
	}
	if s.SchemaVersion >= 4 && s.Reservations == nil {
		s.Reservations = []Reservation{}
	}
	if s.SchemaVersion < 4 && len(s.Reservations) == 0 {
		s.Reservations = nil
	}
}

// Decode parses, normalizes and validates a state document with every
// fail-closed rule of the reference normalizeState (spec §2.3, rules 1-19)
// plus this port's schema-6 rules 20-23 (docs/state-schema.md). Schema 1 is
// normalized to schema 2; unknown fields are dropped (below schema 6 that
// includes fencingToken and overtakes). Every failure is an *Error; nothing
// is repaired.
func Decode(data []byte, opts DecodeOptions) (*State, error) {
	if opts.Lock == "" {
		return nil, newError(CodeInvalidLockName, "decode lock state: expected lock name is empty")
	}
	if serr := CheckStrictJSON(data); serr != nil {
		return nil, newError(serr.Code, fmt.Sprintf("decode lock state %q: %s at %s; refusing the document before any write (no correct client writes one)", opts.Lock, serr.Detail, serr.Path))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, newError(CodeInvalidJSON, fmt.Sprintf("decode lock state %q: invalid JSON: %v", opts.Lock, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, newError(CodeInvalidJSON, fmt.Sprintf("decode lock state %q: invalid JSON: trailing data after the document", opts.Lock))
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, newError(CodeNotObject, fmt.Sprintf("decode lock state %q: state file must contain a JSON object", opts.Lock))
	}
	return decodeState(obj, opts)
}

func decodeState(obj map[string]any, opts DecodeOptions) (*State, error) {
	lock := opts.Lock
	fail := func(code Code, format string, args ...any) (*State, error) {
		return nil, newError(code, fmt.Sprintf("decode lock state %q: ", lock)+fmt.Sprintf(format, args...))
	}
	// Rule 2.
	if got, ok := obj["lock"].(string); !ok || got != lock {
		return fail(CodeLockMismatch, "lock mismatch: state file is for %s", describeLock(obj["lock"]))
	}
	// Rule 3.
	schema, err := decodeSchemaVersion(obj, lock)
	if err != nil {
		return nil, err
	}
	// Rule 4.
	queueRaw, hasQueue := obj["queue"]
	queue, queueIsArray := queueRaw.([]any)
	if hasQueue && !queueIsArray {
		return fail(CodeInvalidQueue, "queue must be an array")
	}
	// Rule 5.
	holdersRaw, holdersIsArray := obj["holders"].([]any)
	if schema >= 2 && !holdersIsArray {
		return fail(CodeInvalidHolders, "schema %d requires a holders array", schema)
	}
	// Rule 6.
	holderRaw, hasHolder := obj["holder"]
	if schema >= 2 && !hasHolder {
		return fail(CodeMissingHolderMirror, "schema %d state must contain the legacy holder mirror", schema)
	}
	// Rule 7.
	reservationsRaw, reservationsIsArray := obj["reservations"].([]any)
	if schema >= 4 && !reservationsIsArray {
		return fail(CodeInvalidReservations, "schema %d requires a reservations array", schema)
	}
	// Rule 8.
	incidentRaw, hasIncident := obj["activeIncident"]
	if schema >= 5 && !hasIncident {
		return fail(CodeMissingActiveIncident, "schema %d state must contain activeIncident (null or an incident)", schema)
	}
	// Rule 20 (schema 6): the fencing counter.
	var counter int64
	if schema >= FencedSchemaVersion {
		v, has := obj["fencingToken"]
		n, ok := safeInteger(v)
		if !has || !ok {
			return fail(CodeInvalidFencingToken, "schema %d requires fencingToken, a non-negative integer up to %d", schema, MaxFencingToken)
		}
		counter = n
	}
	// Rule 9.
	if schema >= 4 {
		for i, r := range reservationsRaw {
			m, ok := r.(map[string]any)
			if !ok || jsTrim(coerce(m["reservationId"])) == "" {
				return fail(CodeInvalidReservation, "reservation %d must be an object with a non-empty reservationId", i)
			}
		}
	}
	// Rule 10.
	if schema == 1 && !hasHolder {
		return fail(CodeMissingHolderMirror, "schema 1 state must contain a holder key")
	}
	// Rule 11.
	holderMaps := make([]map[string]any, 0, len(holdersRaw))
	for i, h := range holdersRaw {
		m, ok := entryObject(h)
		if !ok {
			return fail(CodeInvalidEntry, "holder %d must be an object with a non-empty holderId", i)
		}
		holderMaps = append(holderMaps, m)
	}
	queueMaps := make([]map[string]any, 0, len(queue))
	for i, q := range queue {
		m, ok := entryObject(q)
		if !ok {
			return fail(CodeInvalidEntry, "queue entry %d must be an object with a non-empty holderId", i)
		}
		queueMaps = append(queueMaps, m)
	}
	// Rule 12.
	var mirror map[string]any
	if holderRaw != nil {
		m, ok := entryObject(holderRaw)
		if !ok {
			return fail(CodeInvalidHolderMirror, "holder must be null or an object with a non-empty holderId")
		}
		mirror = m
	}
	// Rule 13.
	if schema >= 2 {
		if err := checkMirror(mirror, holderMaps, schema, lock); err != nil {
			return nil, err
		}
	}
	// Rule 14.
	seen := map[string]bool{}
	for _, m := range holderMaps {
		id := coerce(m["holderId"])
		if seen[id] {
			return fail(CodeDuplicateHolder, "holders contain holderId %q more than once", id)
		}
		seen[id] = true
	}
	// The normalized holders are holders[] ++ [holder], deduped by holderId.
	if mirror != nil && !seen[coerce(mirror["holderId"])] {
		holderMaps = append(holderMaps, mirror)
	}
	nowStr := ""
	if !opts.Now.IsZero() {
		nowStr = FormatTime(opts.Now)
	}
	effective := max(schema, DefaultSchemaVersion)
	s := &State{
		SchemaVersion: effective,
		Lock:          lock,
		Holders:       make([]Holder, 0, len(holderMaps)),
		Queue:         make([]Entry, 0, len(queueMaps)),
		FencingToken:  counter,
		UpdatedAt:     coerce(obj["updatedAt"]),
	}
	// Rules 15, 16, 21 and 23.
	for i, m := range holderMaps {
		e, err := normalizeEntry(m, effective, nowStr, "holder", i, lock)
		if err != nil {
			return nil, err
		}
		acquired := coerce(m["acquiredAt"])
		if acquired == "" {
			acquired = nowStr
		}
		h := Holder{Entry: e, AcquiredAt: acquired, ExpiresAt: coerce(m["expiresAt"])}
		if err := checkTimestamps(lock, "holder", i, e.HolderID, "acquiredAt", h.AcquiredAt, "expiresAt", h.ExpiresAt); err != nil {
			return nil, err
		}
		if effective >= FencedSchemaVersion {
			n, ok := safeInteger(m["fencingToken"])
			if !ok || n < 1 {
				return fail(CodeInvalidFencingToken, "holder %d (%s) needs fencingToken, a positive integer up to %d", i, e.HolderID, MaxFencingToken)
			}
			h.FencingToken = n
		}
		s.Holders = append(s.Holders, h)
	}
	for i, m := range queueMaps {
		e, err := normalizeEntry(m, effective, nowStr, "queue entry", i, lock)
		if err != nil {
			return nil, err
		}
		if effective >= FencedSchemaVersion {
			n, ok := safeInteger(m["overtakes"])
			if !ok {
				return fail(CodeInvalidOvertakes, "queue entry %d (%s) needs overtakes, a non-negative integer up to %d", i, e.HolderID, MaxFencingToken)
			}
			e.Overtakes = int(n)
		}
		s.Queue = append(s.Queue, e)
	}
	// Rule 17.
	if effective >= 4 {
		s.Reservations = make([]Reservation, 0, len(reservationsRaw))
		for i, r := range reservationsRaw {
			res, err := normalizeReservation(r.(map[string]any), i, lock)
			if err != nil {
				return nil, err
			}
			s.Reservations = append(s.Reservations, res)
		}
	}
	if err := decodeSeatState(s, obj); err != nil {
		return nil, err
	}
	if err := decodeRecentArrivals(s, obj); err != nil {
		return nil, err
	}
	if err := decodeRecentHolds(s, obj); err != nil {
		return nil, err
	}
	if effective >= 5 && incidentRaw != nil {
		inc, err := normalizeIncident(incidentRaw, lock)
		if err != nil {
			return nil, err
		}
		s.ActiveIncident = inc
	}
	origin := ""
	if s.ActiveIncident != nil {
		o, err := ServerOrigin(opts.ServerURL)
		if err != nil {
			return nil, err
		}
		origin = o
	}
	// Rules 17 (field checks), 18, 19 and 22.
	if err := validateState(s, origin); err != nil {
		return nil, err
	}
	return s, nil
}

// safeInteger accepts a JSON number whose value is an integer in
// 0..MaxFencingToken (as JavaScript would read it: 3.0 and 3e0 are 3).
// Strings, booleans, null and a missing value are refused.
func safeInteger(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || f < 0 || f > float64(MaxFencingToken) {
		return 0, false
	}
	return int64(f), true
}

// coerce is the reference's `String(value || "")`: falsy values become "".
func coerce(v any) string {
	if !jsTruthy(v) {
		return ""
	}
	return jsString(v)
}

// entryObject reports whether v is an object with a truthy, non-empty holderId.
func entryObject(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || coerce(m["holderId"]) == "" {
		return nil, false
	}
	return m, true
}

// mirrorFields are compared between holder and holders[0] (rule 13).
var mirrorFields = []string{"holderId", "repository", "workflow", "job", "runId", "runAttempt", "runUrl", "queuedAt", "acquiredAt", "expiresAt"}

func checkMirror(mirror map[string]any, holders []map[string]any, schema int, lock string) error {
	mismatch := func(detail string) error {
		return newError(CodeHolderMirrorMismatch, fmt.Sprintf("decode lock state %q: legacy holder mirror does not match holders[0]: %s", lock, detail))
	}
	if len(holders) == 0 {
		if mirror != nil {
			return mismatch("holder is set but holders is empty")
		}
		return nil
	}
	if mirror == nil {
		return mismatch("holder is null but holders is not empty")
	}
	first := holders[0]
	fields := mirrorFields
	if schema >= 3 {
		fields = append(append([]string{}, fields...), "runnerId")
	}
	for _, optional := range []string{"jobId", "runnerName", "runnerOs", "runnerArch", "machineId", "seat", "priority", "labels"} {
		_, a := first[optional]
		_, b := mirror[optional]
		if a || b {
			fields = append(append([]string{}, fields...), optional)
		}
	}
	if schema >= FencedSchemaVersion {
		fields = append(append([]string{}, fields...), "fencingToken")
	}
	for _, f := range fields {
		if coerce(first[f]) != coerce(mirror[f]) {
			return mismatch(fmt.Sprintf("field %s differs", f))
		}
	}
	return nil
}

func normalizeEntry(m map[string]any, schema int, nowStr, kind string, index int, lock string) (Entry, error) {
	e := Entry{
		HolderID:   coerce(m["holderId"]),
		Repository: coerce(m["repository"]),
		Workflow:   coerce(m["workflow"]),
		Job:        coerce(m["job"]),
		RunID:      coerce(m["runId"]),
		RunAttempt: coerce(m["runAttempt"]),
		RunURL:     coerce(m["runUrl"]),
		QueuedAt:   coerce(m["queuedAt"]),
	}
	if e.QueuedAt == "" {
		e.QueuedAt = coerce(m["acquiredAt"])
	}
	if e.QueuedAt == "" {
		e.QueuedAt = nowStr
	}
	if schema >= 3 {
		e.RunnerID = jsTrim(coerce(m["runnerId"]))
		if e.RunnerID == "" {
			return Entry{}, newError(CodeMissingRunnerID, fmt.Sprintf(
				"decode lock state %q: %s %d (%s) has no runnerId, which schema %d requires", lock, kind, index, e.HolderID, schema))
		}
	}
	if v, ok := m["jobId"]; ok {
		e.JobID = jsString(v)
		if !isCanonicalPositiveDecimal(e.JobID) {
			return Entry{}, newError(CodeInvalidJobID, fmt.Sprintf(
				"decode lock state %q: %s %d (%s) has an invalid numeric Actions job ID", lock, kind, index, e.HolderID))
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"runnerName", &e.RunnerName}, {"runnerOs", &e.RunnerOS}, {"runnerArch", &e.RunnerArch}} {
		v, ok := m[f.key]
		if !ok {
			continue
		}
		str, isString := v.(string)
		if !isString || str == "" {
			return Entry{}, newError(CodeInvalidRunnerIdentity, fmt.Sprintf(
				"decode lock state %q: %s %d (%s) has a %s that is not a non-empty string", lock, kind, index, e.HolderID, f.key))
		}
		*f.dst = str
	}
	machine, err := decodeMachineID(m, lock, fmt.Sprintf("%s %d (%s)", kind, index, e.HolderID))
	if err != nil {
		return Entry{}, err
	}
	e.MachineID = machine
	if v, ok := m["pendingRunnerId"]; ok && schema < 3 && kind == "queue entry" {
		str, isString := v.(string)
		if !isString || str == "" {
			return Entry{}, newError(CodeInvalidRunnerIdentity, fmt.Sprintf(
				"decode lock state %q: %s %d (%s) has a pendingRunnerId that is not a non-empty string", lock, kind, index, e.HolderID))
		}
		e.PendingRunnerID = str
	}
	if err := checkRunnerIdentity(lock, kind, index, e); err != nil {
		return Entry{}, err
	}
	if err := decodeSeatFields(m, &e, schema, kind, index, lock); err != nil {
		return Entry{}, err
	}
	if err := checkTimestamps(lock, kind, index, e.HolderID, "queuedAt", e.QueuedAt); err != nil {
		return Entry{}, err
	}
	return e, nil
}

func normalizeReservation(m map[string]any, index int, lock string) (Reservation, error) {
	r := Reservation{
		ReservationID: jsTrim(coerce(m["reservationId"])),
		HolderID:      coerce(m["holderId"]),
		Repository:    coerce(m["repository"]),
		Workflow:      coerce(m["workflow"]),
		Job:           coerce(m["job"]),
		RunID:         coerce(m["runId"]),
		RunAttempt:    coerce(m["runAttempt"]),
		RunURL:        coerce(m["runUrl"]),
		RunnerID:      jsTrim(coerce(m["runnerId"])),
		Reason:        coerce(m["reason"]),
		State:         coerce(m["state"]),
		CreatedAt:     coerce(m["createdAt"]),
		AvailableAt:   coerce(m["availableAt"]),
	}
	if seat, ok := m["seat"].(string); ok {
		r.Seat = seat
	}
	machine, err := decodeMachineID(m, lock, fmt.Sprintf("reservation %q", r.ReservationID))
	if err != nil {
		return Reservation{}, err
	}
	r.MachineID = machine
	if _, has := m["availableAt"]; has && r.State == ReservationQuarantine {
		return Reservation{}, newError(CodeInvalidReservation, fmt.Sprintf(
			"decode lock state %q: quarantine reservation %q must not have availableAt", lock, r.ReservationID))
	}
	_ = index
	return r, nil
}

// Encode returns the exact bytes the reference writes for s:
// JSON.stringify(stableState(s), null, 2) + "\n". It validates s first and
// never encodes an invalid state. Schemas 1 and 2 are written as 2, without
// runnerId. Schema 6, which the reference cannot read, adds fencingToken as
// the last key of each holder and before updatedAt at the top level, and
// overtakes as the last key of each queue entry. UpdatedAt is written as is;
// transitions that change the state set it to the transition's now.
func Encode(s *State) ([]byte, error) {
	if s == nil {
		return nil, newError(CodeInvalidState, "encode lock state: state is nil")
	}
	if err := validateState(s, ""); err != nil {
		return nil, err
	}
	return []byte(stringifyIndent(stableState(s)) + "\n"), nil
}

// stableState builds the ordered document of spec §2.1.
func stableState(s *State) jsonObject {
	schema := max(s.SchemaVersion, DefaultSchemaVersion)
	holders := make(jsonArray, 0, len(s.Holders))
	for _, h := range s.Holders {
		holders = append(holders, holderNode(h, schema))
	}
	var mirror jsonNode = jsonNull{}
	if len(holders) > 0 {
		mirror = holders[0]
	}
	queue := make(jsonArray, 0, len(s.Queue))
	for _, e := range s.Queue {
		o := entryNode(e, schema, nil)
		if schema >= FencedSchemaVersion {
			o = append(o, jsonMember{"overtakes", jsonInt(e.Overtakes)})
		}
		o = appendSeatMembers(o, e)
		queue = append(queue, o)
	}
	doc := jsonObject{
		{"schemaVersion", jsonInt(schema)},
		{"lock", jsonString(s.Lock)},
		{"holder", mirror},
		{"holders", holders},
		{"queue", queue},
	}
	if schema >= 4 {
		res := make(jsonArray, 0, len(s.Reservations))
		for _, r := range s.Reservations {
			res = append(res, reservationNode(r))
		}
		doc = append(doc, jsonMember{"reservations", res})
	}
	if schema >= 5 {
		var inc jsonNode = jsonNull{}
		if s.ActiveIncident != nil {
			inc = incidentNode(s.ActiveIncident)
		}
		doc = append(doc, jsonMember{"activeIncident", inc})
	}
	if schema >= FencedSchemaVersion {
		doc = append(doc, jsonMember{"fencingToken", jsonInt(s.FencingToken)})
		if len(s.Seats) > 0 {
			doc = append(doc, jsonMember{"seats", seatUsesNode(s.Seats)})
		}
	}
	if len(s.RecentArrivals) > 0 {
		doc = append(doc, jsonMember{"recentArrivals", recentArrivalsNode(s.RecentArrivals)})
	}
	if len(s.RecentHolds) > 0 {
		doc = append(doc, jsonMember{"recentHolds", recentHoldsNode(s.RecentHolds)})
	}
	return append(doc, jsonMember{"updatedAt", jsonString(s.UpdatedAt)})
}

func entryNode(e Entry, schema int, holder *Holder) jsonObject {
	o := jsonObject{
		{"holderId", jsonString(e.HolderID)},
		{"repository", jsonString(e.Repository)},
		{"workflow", jsonString(e.Workflow)},
		{"job", jsonString(e.Job)},
		{"runId", jsonString(e.RunID)},
		{"runAttempt", jsonString(e.RunAttempt)},
		{"runUrl", jsonString(e.RunURL)},
		{"queuedAt", jsonString(e.QueuedAt)},
	}
	if holder != nil {
		o = append(o, jsonMember{"acquiredAt", jsonString(holder.AcquiredAt)}, jsonMember{"expiresAt", jsonString(holder.ExpiresAt)})
	}
	if schema >= 3 {
		o = append(o, jsonMember{"runnerId", jsonString(e.RunnerID)})
	}
	if e.JobID != "" {
		o = append(o, jsonMember{"jobId", jsonString(e.JobID)})
	}
	for _, f := range [...]struct{ key, value string }{{"runnerName", e.RunnerName}, {"runnerOs", e.RunnerOS}, {"runnerArch", e.RunnerArch}, {"machineId", e.MachineID}} {
		if f.value != "" {
			o = append(o, jsonMember{f.key, jsonString(f.value)})
		}
	}
	if schema < 3 && holder == nil && e.PendingRunnerID != "" {
		o = append(o, jsonMember{"pendingRunnerId", jsonString(e.PendingRunnerID)})
	}
	return o
}

// holderNode writes a holder: the entry keys with acquiredAt and expiresAt
// after queuedAt, then (schema >= 6) fencingToken as the last key.
func holderNode(h Holder, schema int) jsonObject {
	o := entryNode(h.Entry, schema, &h)
	if schema >= FencedSchemaVersion {
		o = append(o, jsonMember{"fencingToken", jsonInt(h.FencingToken)})
	}
	return appendSeatMembers(o, h.Entry)
}

// reservationNode writes the reservation key order chosen for this port
// (the spec gives the field list, not the reference's normalize order):
// reservationId, holderId, repository, workflow, job, runId, runAttempt,
// runUrl, runnerId, state, reason, createdAt, then availableAt for cooldowns.
func reservationNode(r Reservation) jsonObject {
	o := jsonObject{
		{"reservationId", jsonString(r.ReservationID)},
		{"holderId", jsonString(r.HolderID)},
		{"repository", jsonString(r.Repository)},
		{"workflow", jsonString(r.Workflow)},
		{"job", jsonString(r.Job)},
		{"runId", jsonString(r.RunID)},
		{"runAttempt", jsonString(r.RunAttempt)},
		{"runUrl", jsonString(r.RunURL)},
		{"runnerId", jsonString(r.RunnerID)},
		{"state", jsonString(r.State)},
		{"reason", jsonString(r.Reason)},
		{"createdAt", jsonString(r.CreatedAt)},
	}
	if r.State == ReservationCooldown {
		o = append(o, jsonMember{"availableAt", jsonString(r.AvailableAt)})
	}
	if r.MachineID != "" {
		o = append(o, jsonMember{"machineId", jsonString(r.MachineID)})
	}
	if r.Seat != "" {
		o = append(o, jsonMember{"seat", jsonString(r.Seat)})
	}
	return o
}
