package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Options configure Run.
type Options struct {
	// Repository is the lock repository, OWNER/NAME.
	Repository string
	// StateBranch is the lock state branch; default store.DefaultBranch.
	StateBranch string
	// Lock names the one lock whose config is checked; empty checks every
	// locks/<name>.config.json on the default branch.
	Lock string
	// Getenv supplies the credentials: BUILD_LOCK_APP_ID and
	// BUILD_LOCK_APP_PRIVATE_KEY (writer), BUILD_LOCK_READER_APP_ID and
	// BUILD_LOCK_READER_APP_PRIVATE_KEY (reader), and GITHUB_API_URL.
	Getenv func(string) string
	// Transport and Clock are injected by tests (the emulator).
	Transport http.RoundTripper
	Clock     clock.Clock
}

// ErrUsage marks a refusal of the options themselves.
var ErrUsage = errors.New("doctor: usage")

// Run performs every check and returns the results in a fixed order. An
// error means the checks could not run at all (bad options).
func Run(ctx context.Context, o Options) ([]Result, error) {
	owner, name, ok := strings.Cut(o.Repository, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%w: --lock-repository must be OWNER/NAME, got %q", ErrUsage, o.Repository)
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	settings := LoadSettings(o.Getenv)
	if o.StateBranch == "" {
		o.StateBranch = store.DefaultBranch
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	d := &run{o: o, s: settings, owner: owner, name: name}
	d.writer(ctx)
	d.reader(ctx)
	d.repository(ctx)
	return d.results, nil
}

type run struct {
	o           Options
	s           Settings
	owner, name string
	results     []Result
	// repo reads the lock repository: the writer's token scoped to it.
	repo *ghclient.Client
	// actions reads the lock repository's workflows: the reader's token
	// scoped to it, when the reader reaches it.
	actions *ghclient.Client
}

func (d *run) add(r Result) { d.results = append(d.results, r) }

// app builds an App client from the App's settings, or explains why not.
func (d *run) app(ctx context.Context, app AppSettings, cfg ghclient.Config) (*ghclient.Client, string) {
	if app.Problem != "" {
		return nil, app.Problem
	}
	cfg.APIURL, cfg.AppID, cfg.PrivateKey = d.s.APIURL, app.AppID, app.PrivateKey
	cfg.Transport, cfg.Clock, cfg.ETagCacheEntries = d.o.Transport, d.o.Clock, -1
	c, err := ghclient.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Sprintf("%s/%s: %v", app.IDVar, app.KeyVar, err)
	}
	return c, ""
}

func notFound(err error) bool {
	var ge *ghclient.Error
	return errors.As(err, &ge) && ge.Status == http.StatusNotFound
}

func perms(p *github.InstallationPermissions) map[string]string {
	out := map[string]string{}
	if p == nil {
		return out
	}
	// The permission names are the JSON keys GitHub uses.
	b, err := json.Marshal(p)
	if err != nil {
		return out
	}
	var m map[string]string
	if json.Unmarshal(b, &m) == nil {
		for k, v := range m {
			if v != "" {
				out[k] = v
			}
		}
	}
	return out
}

func (d *run) writer(ctx context.Context) {
	lockRepo := d.owner + "/" + d.name
	c, why := d.app(ctx, d.s.Writer, ghclient.Config{InstallationRepository: lockRepo})
	if c == nil {
		d.add(fail(CheckWriterInstalled, "Set "+lockaction.EnvAppID+" and "+lockaction.EnvAppPrivateKey+" to the writer App's id and private key.", "%s", why))
		d.add(skip(CheckWriterPermissions, "no writer credentials"))
		d.add(skip(CheckWriterRepositories, "no writer credentials"))
		return
	}
	inst, err := c.Installation(ctx, ghclient.Budget{})
	switch {
	case notFound(err):
		d.add(fail(CheckWriterInstalled, "Install the writer App on "+lockRepo+" only (Settings → GitHub Apps → Install, \"Only select repositories\").",
			"the writer App is not installed on %s", lockRepo))
		d.add(skip(CheckWriterPermissions, "not installed"))
		d.add(skip(CheckWriterRepositories, "not installed"))
		return
	case err != nil:
		d.add(fail(CheckWriterInstalled, "Check the App id, its private key and GITHUB_API_URL.", "cannot read the writer App's installation: %v", err))
		d.add(skip(CheckWriterPermissions, "installation unreadable"))
		d.add(skip(CheckWriterRepositories, "installation unreadable"))
		return
	}
	d.add(pass(CheckWriterInstalled, "the writer App (installation %d) is installed on %s", inst.GetID(), lockRepo))
	d.add(Permissions(CheckWriterPermissions, "writer App", WriterPermissions, perms(inst.Permissions)))
	var repos []string
	listErr := c.Do(ctx, ghclient.Op{Name: "GET /installation/repositories"}, func(ctx context.Context) (*github.Response, error) {
		list, resp, err := c.GitHub().Apps.ListRepos(ctx, &github.ListOptions{PerPage: 100})
		if err == nil {
			for _, r := range list.Repositories {
				repos = append(repos, r.GetFullName())
			}
		}
		return resp, err
	})
	if listErr != nil {
		d.add(fail(CheckWriterRepositories, "Give the writer App contents: write on the lock repository.", "cannot list the writer installation's repositories: %v", listErr))
	} else {
		sort.Strings(repos)
		d.add(WriterRepositories(inst.GetRepositorySelection(), repos, lockRepo))
	}
	// The repository checks read with a token narrowed to the lock
	// repository and contents: read.
	if rc, why := d.app(ctx, d.s.Writer, ghclient.Config{InstallationRepository: lockRepo,
		TokenRepositories: []string{d.name}, Permissions: &github.InstallationPermissions{Contents: github.String("read")}}); rc != nil {
		d.repo = rc
	} else {
		d.add(fail(CheckWriterRepositories, "Check the writer credentials.", "%s", why))
	}
}

func (d *run) reader(ctx context.Context) {
	c, why := d.app(ctx, d.s.Reader, ghclient.Config{InstallationOwner: d.owner})
	if c == nil {
		d.add(fail(CheckReaderInstalled, "Set "+lockaction.EnvReaderAppID+" and "+lockaction.EnvReaderAppKey+" to the reader App's id and private key.", "%s", why))
		d.add(skip(CheckReaderPermissions, "no reader credentials"))
		d.add(skip(CheckReaderRepositories, "no reader credentials"))
		return
	}
	inst, err := c.Installation(ctx, ghclient.Budget{})
	switch {
	case notFound(err):
		d.add(fail(CheckReaderInstalled, "Install the reader App on "+d.owner+" for the consumer repositories (\"Only select repositories\").",
			"the reader App is not installed on %s", d.owner))
		d.add(skip(CheckReaderPermissions, "not installed"))
		d.add(skip(CheckReaderRepositories, "not installed"))
		return
	case err != nil:
		d.add(fail(CheckReaderInstalled, "Check the App id, its private key and GITHUB_API_URL.", "cannot read the reader App's installation: %v", err))
		d.add(skip(CheckReaderPermissions, "installation unreadable"))
		d.add(skip(CheckReaderRepositories, "installation unreadable"))
		return
	}
	d.add(pass(CheckReaderInstalled, "the reader App (installation %d) is installed on %s", inst.GetID(), d.owner))
	d.add(Permissions(CheckReaderPermissions, "reader App", ReaderPermissions, perms(inst.Permissions)))
	count := 0
	listErr := c.Do(ctx, ghclient.Op{Name: "GET /installation/repositories"}, func(ctx context.Context) (*github.Response, error) {
		list, resp, err := c.GitHub().Apps.ListRepos(ctx, &github.ListOptions{PerPage: 100})
		if err == nil {
			count = list.GetTotalCount()
		}
		return resp, err
	})
	if listErr != nil {
		d.add(fail(CheckReaderRepositories, "Grant the reader App the permissions docs/adopting.md names.", "cannot list the reader installation's repositories: %v", listErr))
	} else {
		d.add(ReaderRepositories(inst.GetRepositorySelection(), count))
	}
	if ac, _ := d.app(ctx, d.s.Reader, ghclient.Config{InstallationOwner: d.owner,
		TokenRepositories: []string{d.name}, Permissions: &github.InstallationPermissions{Actions: github.String("read")}}); ac != nil {
		d.actions = ac
	}
}

func (d *run) repository(ctx context.Context) {
	ids := []string{CheckStateBranch, CheckStateBranchProtection, CheckDefaultBranchProtection, CheckLockConfig, CheckReaperWorkflow, CheckReaperEnabled}
	if d.repo == nil {
		for _, id := range ids {
			d.add(skip(id, "no token can read %s/%s (the writer App checks failed)", d.owner, d.name))
		}
		return
	}
	gh := d.repo.GitHub()
	var repo *github.Repository
	if err := d.repo.Do(ctx, ghclient.Op{Name: "GET repository"}, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		repo, resp, err = gh.Repositories.Get(ctx, d.owner, d.name)
		return resp, err
	}); err != nil {
		for _, id := range ids {
			d.add(skip(id, "cannot read %s/%s: %v", d.owner, d.name, err))
		}
		return
	}
	def := repo.GetDefaultBranch()

	err := d.repo.Do(ctx, ghclient.Op{Name: "GET state branch"}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Repositories.GetBranch(ctx, d.owner, d.name, d.o.StateBranch, 0)
		return resp, err
	})
	switch {
	case notFound(err):
		// A brand-new lock repository: the first state write creates the
		// branch from the default branch's head (store.Update). A ruleset
		// protects a branch name before the branch exists (GitHub's "Get
		// rules for a branch": "The branch does not need to exist"), which
		// the next check reads.
		d.add(pass(CheckStateBranch, "the state branch %s does not exist yet; the first acquire creates it (protected from its first commit by the ruleset checked next)", d.o.StateBranch))
	case err != nil:
		d.add(fail(CheckStateBranch, "Check the writer App's contents permission.", "cannot read the state branch %s: %v", d.o.StateBranch, err))
	default:
		d.add(pass(CheckStateBranch, "the state branch %s exists", d.o.StateBranch))
	}
	if types, err := d.rules(ctx, d.o.StateBranch); err != nil {
		d.add(fail(CheckStateBranchProtection, "Check the writer App's metadata permission.", "cannot read the rules of %s: %v", d.o.StateBranch, err))
	} else {
		d.add(StateRules(d.o.StateBranch, types))
	}
	if types, err := d.rules(ctx, def); err != nil {
		d.add(fail(CheckDefaultBranchProtection, "Check the writer App's metadata permission.", "cannot read the rules of %s: %v", def, err))
	} else {
		d.add(DefaultRules(def, types))
	}
	d.configs(ctx, def)
	d.reaper(ctx, def)
}

func (d *run) rules(ctx context.Context, branch string) ([]string, error) {
	var types []string
	err := d.repo.Do(ctx, ghclient.Op{Name: "GET branch rules " + branch}, func(ctx context.Context) (*github.Response, error) {
		rules, resp, err := d.repo.GitHub().Repositories.GetRulesForBranch(ctx, d.owner, d.name, branch)
		types = types[:0]
		for _, r := range rules {
			types = append(types, r.Type)
		}
		return resp, err
	})
	return types, err
}

func (d *run) configs(ctx context.Context, def string) {
	locks := []string{d.o.Lock}
	if d.o.Lock == "" {
		locks = nil
		err := d.repo.Do(ctx, ghclient.Op{Name: "GET contents locks/"}, func(ctx context.Context) (*github.Response, error) {
			_, dir, resp, err := d.repo.GitHub().Repositories.GetContents(ctx, d.owner, d.name, "locks", &github.RepositoryContentGetOptions{Ref: def})
			for _, f := range dir {
				if n, ok := strings.CutSuffix(f.GetName(), ".config.json"); ok && f.GetType() == "file" {
					locks = append(locks, n)
				}
			}
			return resp, err
		})
		if err != nil && !notFound(err) {
			d.add(fail(CheckLockConfig, "Check the writer App's contents permission.", "cannot list locks/ on %s: %v", def, err))
			return
		}
		if len(locks) == 0 {
			d.add(fail(CheckLockConfig, "Commit locks/<name>.config.json on the default branch (locks/README.md), for example {\"maxHolders\": 2}.",
				"no locks/<name>.config.json on %s", def))
			return
		}
		sort.Strings(locks)
	}
	for _, lock := range locks {
		st, err := store.New(store.Options{Client: d.repo, Owner: d.owner, Repo: d.name, Branch: d.o.StateBranch, Lock: lock, Clock: d.o.Clock})
		if err != nil {
			d.add(fail(CheckLockConfig, "Use a lock name of A-Z a-z 0-9 . _ - (1-80 characters).", "lock %q: %v", lock, err))
			continue
		}
		_, warnings, err := st.LoadConfig(ctx)
		if err != nil {
			d.add(fail(CheckLockConfig, "Fix locks/"+lock+".config.json on "+def+" (locks/README.md documents every field).", "lock %s: %v", lock, err))
			continue
		}
		if len(warnings) > 0 {
			// A config the lock can only use with a fallback is not valid:
			// the lock runs with other settings than the ones reviewed.
			d.add(fail(CheckLockConfig, "Fix locks/"+lock+".config.json on "+def+" (locks/README.md documents every field).",
				"lock %s falls back: %s", lock, strings.Join(warnings, "; ")))
			continue
		}
		d.add(pass(CheckLockConfig, "locks/%s.config.json is valid", lock))
	}
}

func (d *run) reaper(ctx context.Context, def string) {
	var content []byte
	err := d.repo.Do(ctx, ghclient.Op{Name: "GET contents " + ReaperWorkflowPath}, func(ctx context.Context) (*github.Response, error) {
		f, _, resp, err := d.repo.GitHub().Repositories.GetContents(ctx, d.owner, d.name, ReaperWorkflowPath, &github.RepositoryContentGetOptions{Ref: def})
		if err == nil && f != nil {
			s, derr := f.GetContent()
			if derr != nil {
				return resp, derr
			}
			content = []byte(s)
		}
		return resp, err
	})
	switch {
	case notFound(err):
		d.add(fail(CheckReaperWorkflow, "Keep "+ReaperWorkflowPath+" from this repository on the default branch.", "%s is missing on %s", ReaperWorkflowPath, def))
	case err != nil:
		d.add(fail(CheckReaperWorkflow, "Check the writer App's contents permission.", "cannot read %s: %v", ReaperWorkflowPath, err))
	default:
		d.add(ReaperFile(content))
	}
	if d.actions == nil {
		d.add(skip(CheckReaperEnabled, "the reader App does not reach %s/%s, so the workflow's state is not readable here; check Actions → Reap stale build locks", d.owner, d.name))
		return
	}
	var wf *github.Workflow
	err = d.actions.Do(ctx, ghclient.Op{Name: "GET workflow"}, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		wf, resp, err = d.actions.GitHub().Actions.GetWorkflowByFileName(ctx, d.owner, d.name, "reap-stale-locks.yml")
		return resp, err
	})
	switch {
	case notFound(err):
		d.add(fail(CheckReaperEnabled, "Push "+ReaperWorkflowPath+" to the default branch; GitHub registers a workflow when it lands there.", "GitHub has no workflow reap-stale-locks.yml"))
	case err != nil:
		d.add(skip(CheckReaperEnabled, "cannot read the workflow's state: %v", err))
	default:
		d.add(ReaperState(wf.GetState()))
	}
}

// Render prints one line per check: PASS/FAIL/SKIP, the id, the detail,
// and for a failure the fix on the next line.
func Render(w io.Writer, rs []Result) error {
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%-4s  %-26s %s\n", strings.ToUpper(string(r.Status)), r.ID, r.Detail); err != nil {
			return err
		}
		if r.Fix != "" {
			if _, err := fmt.Fprintf(w, "      fix: %s\n", r.Fix); err != nil {
				return err
			}
		}
	}
	return nil
}
