package history

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Commit is one commit of the state branch as GitHub's commits list reports
// it (https://docs.github.com/en/rest/commits/commits#list-commits).
type Commit struct {
	// SHA is the commit id (40 lowercase hex digits).
	SHA string `json:"sha"`
	// Parents are the parent commit ids, in order.
	Parents []string `json:"parents"`
	// Time is the committer date: GitHub's clock for API writes, whole
	// seconds.
	Time time.Time `json:"time"`
	// AuthorLogin and AuthorType name the GitHub account linked to the
	// commit author ("build-lock-writer[bot]", "Bot"); empty when GitHub
	// links none (an unknown email in a git push).
	AuthorLogin string `json:"author_login,omitempty"`
	AuthorType  string `json:"author_type,omitempty"`
	// AuthorName and AuthorEmail are the git identity, kept for messages.
	AuthorName  string `json:"author_name,omitempty"`
	AuthorEmail string `json:"author_email,omitempty"`
	// Message is the commit message.
	Message string `json:"message,omitempty"`
	// Verified is GitHub's signature verification verdict.
	Verified bool `json:"verified,omitempty"`
}

// Author is the name a report uses for the commit's author: the linked
// login, else the git name and email.
func (c Commit) Author() string {
	if c.AuthorLogin != "" {
		return c.AuthorLogin
	}
	if c.AuthorName != "" || c.AuthorEmail != "" {
		return c.AuthorName + " <" + c.AuthorEmail + ">"
	}
	return "(unknown)"
}

// Version is the state file as one commit left it.
type Version struct {
	Commit
	// BlobSHA is the git blob id of Content, "" when the commit deleted the
	// file.
	BlobSHA string `json:"blob_sha,omitempty"`
	// Content is the file's bytes; nil when the commit deleted the file.
	Content []byte `json:"-"`
}

// Deleted reports whether the commit deleted the state file.
func (v Version) Deleted() bool { return v.Content == nil }

// ConfigVersion is one version of locks/<lock>.config.json on the default
// branch: in force from Time until the next version's Time.
type ConfigVersion struct {
	// SHA is the commit that wrote this version.
	SHA string `json:"sha"`
	// Time is that commit's committer date.
	Time time.Time `json:"time"`
	// Config is what lockstate.DecodeConfig made of the file (the safe
	// defaults when the commit deleted it).
	Config lockstate.Config `json:"config"`
	// Warnings are DecodeConfig's fallbacks.
	Warnings []string `json:"warnings,omitempty"`
	// Missing is true when the commit deleted the file.
	Missing bool `json:"missing,omitempty"`
}

// Defaults for Input.
const (
	// DefaultConfigStaleness is how long before a write a config version may
	// still have been the one its writer read. Acquire re-reads the config
	// every 5 minutes (acquire.DefaultConfigTTL) and release and the reaper
	// read it once at their start; 10 minutes covers a slow writer.
	DefaultConfigStaleness = 10 * time.Minute
	// DefaultLeaseGrace is the reaper's quarantine auto-recovery grace: the
	// default holder lease, 240 minutes.
	DefaultLeaseGrace = 240 * time.Minute
	// ClockSkewNote is the difference between a writer's clock (the state's
	// own timestamps) and GitHub's commit time above which a note is added.
	ClockSkewNote = 5 * time.Minute
)

// Input is everything Verify needs. Versions are the commits that touched
// the state file, oldest first; the reader guarantees they are every such
// commit after Base (or from the file's creation when Base is nil).
type Input struct {
	// Lock is the lock name (the state's "lock" must equal it).
	Lock string
	// ServerURL is GITHUB_SERVER_URL (incident runUrl origin); "" means
	// https://github.com.
	ServerURL string
	// Base is the version just before Versions[0], already verified by an
	// earlier run (from the checkpoint). Nil means Versions start at the
	// file's creation.
	Base *Version
	// StartProven says the reader proved that Versions[0] created the file
	// (its parent commit has no such file). With Base nil and StartProven
	// false the history is truncated and Verify reports it incomplete.
	StartProven bool
	// Versions are the commits that changed the file, oldest first.
	Versions []Version
	// Configs is the config file's history on the default branch, oldest
	// first. Before the first version (and when empty) the defaults apply.
	Configs []ConfigVersion
	// ConfigStaleness widens the configs a write may have used; 0 means
	// DefaultConfigStaleness.
	ConfigStaleness time.Duration
	// LeaseGrace is the reaper's quarantine auto-recovery grace; 0 means
	// DefaultLeaseGrace.
	LeaseGrace time.Duration
	// Writers are the logins allowed to write state (the writer App's bot,
	// "<slug>[bot]"). Empty disables the author rule (with a note).
	Writers []string
	// AllowUnsignedWriters accepts a commit attributed to a writer without
	// GitHub's verified signature. By default such a commit is a finding
	// (RuleUnsignedWriter): GitHub signs every Contents API write of an App
	// installation, so an unsigned one is a git push that borrowed the App's
	// noreply address. Only for GitHub Enterprise Server instances that do
	// not sign web commits.
	AllowUnsignedWriters bool
	// Operators are the logins additionally allowed to write operator
	// recovery (recover, recover-incident) and the first version of the file
	// (bootstrap).
	Operators []string
	// Checkpoint is the previous run's checkpoint, for the rewrite rule.
	Checkpoint *Checkpoint
	// Listed is every commit SHA the reader listed for the state file on
	// the branch when the checkpoint's head was NOT among them (the reader
	// then listed the whole history). Nil when the head was found.
	Listed []string
	// Acknowledged are commits whose findings an operator accepted
	// (buildlock history verify --acknowledge): they are reported but do
	// not fail the run.
	Acknowledged []string
	// Incomplete, when set by the reader, says why the history could not be
	// read completely (a bound, an unreadable version). Verify then checks
	// what it has and reports StatusIncomplete.
	Incomplete string
}

func (in *Input) staleness() time.Duration {
	if in.ConfigStaleness > 0 {
		return in.ConfigStaleness
	}
	return DefaultConfigStaleness
}

func (in *Input) leaseGrace() time.Duration {
	if in.LeaseGrace > 0 {
		return in.LeaseGrace
	}
	return DefaultLeaseGrace
}

func (in *Input) serverURL() string {
	if in.ServerURL != "" {
		return in.ServerURL
	}
	return lockstate.DefaultServerURL
}
