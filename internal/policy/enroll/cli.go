package enroll

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// DefaultOverallTimeout bounds one audit run (64 repositories at a few
// dozen requests each fit well inside it).
const DefaultOverallTimeout = 20 * time.Minute

// ErrDrift marks a completed audit with findings (exit 1).
var ErrDrift = errors.New("enroll: drift: findings in enrolled repositories")

// ErrIncomplete marks an audit that could not read or analyze everything
// (exit 1).
var ErrIncomplete = errors.New("enroll: the audit is incomplete")

const usage = `usage: audit-enrollment <command> [flags]

commands:
  audit              read every enrolled repository at its default-branch head, analyze it, write the artifact
                     (exit 0 clean, 1 findings or incomplete, 2 usage or registry error)
  sync-issue         open, update, close or reopen the one drift issue from an audit artifact
                     (exit 0 synced, 1 synced but the audit is incomplete or the sync failed, 2 usage or invalid artifact)
  validate-registry  check a registry file (exit 0 valid, 2 invalid)
  onboard            validate a repository and open the pull request that registers it
                     (exit 0 opened or already open, 1 API failure, 2 refused)
`

// ExitCode maps Main's error to the process exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, monitor.ErrUsage), errors.Is(err, ErrRegistry), errors.Is(err, ErrRefused), errors.Is(err, registry.ErrInvalid):
		return 2
	default:
		return 1
	}
}

// Main is the audit-enrollment command. Errors are also written as
// ::error:: workflow commands on stdout; the returned error decides the
// exit code (ExitCode).
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps monitor.Deps) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: a command is required", monitor.ErrUsage)
	}
	var err error
	s, a := LoadSettings(getenv), edgesettings.IO(getenv, stdout)
	switch args[0] {
	case "audit":
		err = runAudit(ctx, args[1:], s, a, stdout, stderr, deps)
	case "sync-issue":
		err = runSync(ctx, args[1:], s, a, stdout, stderr, deps)
	case "validate-registry":
		err = runValidate(args[1:], s, stdout, stderr)
	case "onboard":
		err = runOnboard(ctx, args[1:], s, a, stdout, stderr, deps)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		err = fmt.Errorf("%w: unknown command %q", monitor.ErrUsage, args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil && !errors.Is(err, ErrDrift) {
		a.Error("Organization Unity enrollment: " + err.Error())
		fmt.Fprintln(stderr, "audit-enrollment:", err)
	}
	return err
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", monitor.ErrUsage, fs.Args())
	}
	return nil
}

// lockEnv returns the workflow environment and the lock repository
// (--lock-repository, default GITHUB_REPOSITORY). With withReader, the
// reader App's credentials are required too, and every problem is
// reported at once.
func lockEnv(s Settings, repo string, withReader bool) (env monitor.Env, owner, name, lockRepository string, err error) {
	var problems []error
	if s.EnvErr != nil {
		problems = append(problems, s.EnvErr)
	} else {
		if repo == "" {
			repo = s.Env.Repository
		}
		if owner, name, err = monitor.SplitRepository(repo); err != nil {
			problems = append(problems, err)
		}
	}
	if withReader && s.ReaderErr != nil {
		problems = append(problems, fmt.Errorf("%w: %v", monitor.ErrUsage, s.ReaderErr))
	}
	return s.Env, owner, name, repo, errors.Join(problems...)
}

// readerFactory returns the reader App's per-repository clients: each
// token is scoped to exactly one enrolled repository with contents: read.
// The App's secrets are masked in a's log first.
func readerFactory(ctx context.Context, s Settings, a *actionio.IO, org string, deps monitor.Deps) ClientFor {
	s.Reader.MaskIn(a)
	creds, env := s.Reader, s.Env
	return func(_ context.Context, repository string) (*ghclient.Client, error) {
		_, name, ok := registry.SplitRepository(repository)
		if !ok {
			return nil, fmt.Errorf("enroll: %q is not owner/name", repository)
		}
		return ghclient.New(ctx, ghclient.Config{
			APIURL: env.APIURL, AppID: creds.AppID, PrivateKey: creds.PrivateKey, InstallationOwner: org,
			TokenRepositories: []string{name}, Permissions: &github.InstallationPermissions{Contents: github.String("read")},
			Transport: deps.Transport, Clock: deps.ClockOrReal(), Warn: a.Warning, Mask: a.Mask,
		})
	}
}

func runAudit(ctx context.Context, args []string, s Settings, a *actionio.IO, stdout, stderr io.Writer, deps monitor.Deps) error {
	fs := flag.NewFlagSet("audit-enrollment audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	regFile := fs.String("registry", "", "registry file (default: "+registry.Path+" on the lock repository's default branch, read through the API)")
	out := fs.String("out", "", "write the audit artifact (JSON) to this file (default stdout)")
	repo := fs.String("lock-repository", "", "lock repository owner/name (default $GITHUB_REPOSITORY)")
	if err := parse(fs, args); err != nil {
		return err
	}
	env, owner, _, lockRepository, err := lockEnv(s, *repo, true)
	if err != nil {
		return err
	}
	*repo = lockRepository
	ctx, cancel := context.WithTimeout(ctx, DefaultOverallTimeout)
	defer cancel()
	reader := readerFactory(ctx, s, a, owner, deps)
	var reg *registry.Registry
	if *regFile != "" {
		data, err := readFile(*regFile)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrRegistry, err)
		}
		if reg, err = registry.Decode(data, registry.DecodeOptions{Organization: owner}); err != nil {
			return fmt.Errorf("%w: %v", ErrRegistry, err)
		}
	} else {
		gh, err := monitor.NewClient(ctx, env, deps, a.Warning)
		if err != nil {
			return err
		}
		if reg, err = ReadRegistry(ctx, gh, *repo, ""); err != nil {
			return err
		}
	}
	clk := deps.ClockOrReal()
	aud := &Auditor{LockRepository: *repo, Registry: reg, Reader: reader, Now: clk.Now}
	art, err := aud.Audit(ctx)
	if err != nil {
		return err
	}
	data, err := art.Encode()
	if err != nil {
		return err
	}
	if *out == "" {
		if _, err := stdout.Write(data); err != nil {
			return err
		}
	} else if err := writeFile(*out, data); err != nil {
		return err
	}
	line := fmt.Sprintf("audit-enrollment: repositories=%d findings=%d inventory=%d complete=%t", len(art.Repositories), len(art.Findings), len(art.Inventory), art.Complete)
	fmt.Fprintln(stderr, line)
	_ = a.Summary("### Organization Unity enrollment audit\n\n" + line + "\n")
	switch {
	case !art.Complete:
		return ErrIncomplete
	case len(art.Findings) > 0:
		return ErrDrift
	}
	return nil
}

func runSync(ctx context.Context, args []string, s Settings, a *actionio.IO, stdout, stderr io.Writer, deps monitor.Deps) error {
	fs := flag.NewFlagSet("audit-enrollment sync-issue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	auditFile := fs.String("audit", "", "the audit artifact written by audit --out (required)")
	artifactURL := fs.String("artifact-url", "", "URL of the uploaded artifact (default $ENROLLMENT_ARTIFACT_URL; required)")
	repo := fs.String("lock-repository", "", "lock repository owner/name (default $GITHUB_REPOSITORY)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *auditFile == "" {
		return fmt.Errorf("%w: --audit is required", monitor.ErrUsage)
	}
	if *artifactURL == "" {
		*artifactURL = s.ArtifactURL
	}
	env, owner, name, lockRepository, err := lockEnv(s, *repo, false)
	if err != nil {
		return err
	}
	*repo = lockRepository
	data, err := readFile(*auditFile)
	if err != nil {
		return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	art, err := DecodeArtifact(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	if !strings.EqualFold(art.LockRepository, *repo) {
		return fmt.Errorf("%w: the artifact audits %s, not %s", monitor.ErrUsage, art.LockRepository, *repo)
	}
	link, err := ValidateArtifactURL(*artifactURL, env.ServerURL, *repo, s.RunID)
	if err != nil {
		return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	ctx, cancel := context.WithTimeout(ctx, monitor.DefaultOverallTimeout)
	defer cancel()
	gh, err := monitor.NewClient(ctx, env, deps, a.Warning)
	if err != nil {
		return err
	}
	ic, err := githubissue.New(githubissue.Options{Client: gh, Owner: owner, Repo: name, Clock: deps.ClockOrReal()})
	if err != nil {
		return err
	}
	docs := strings.TrimRight(env.ServerURL, "/") + "/" + *repo + "/blob/HEAD/docs/enrollment.md"
	syncer := &IssueSyncer{Issues: ic, GitHub: gh, Owner: owner, Repo: name}
	res, err := syncer.Sync(ctx, RenderBody(art, link, docs), art.Clean())
	if err != nil {
		return fmt.Errorf("sync the drift issue: %w", err)
	}
	line := fmt.Sprintf("audit-enrollment: issue=%s findings=%d complete=%t", res.Action, len(art.Findings), art.Complete)
	if res.Issue != nil {
		line += fmt.Sprintf(" #%d %s", res.Issue.Number, res.Issue.HTMLURL)
	}
	fmt.Fprintln(stdout, line)
	if !art.Complete {
		return ErrIncomplete
	}
	return nil
}

func runValidate(args []string, s Settings, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit-enrollment validate-registry", flag.ContinueOnError)
	fs.SetOutput(stderr)
	org := fs.String("organization", "", "the owner the registry must name (default: the owner of $GITHUB_REPOSITORY, if set)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	file := registry.Path
	switch fs.NArg() {
	case 0:
	case 1:
		file = fs.Arg(0)
	default:
		return fmt.Errorf("%w: at most one registry file", monitor.ErrUsage)
	}
	if *org == "" {
		if o, _, ok := strings.Cut(s.Repository, "/"); ok {
			*org = o
		}
	}
	data, err := readFile(file)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRegistry, err)
	}
	reg, err := registry.Decode(data, registry.DecodeOptions{Organization: *org})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: valid: %d repositories, %d approved lock commits, %d exceptions\n", file, len(reg.Repositories), len(reg.ApprovedLockShas), len(reg.Exceptions))
	return nil
}

func runOnboard(ctx context.Context, args []string, s Settings, a *actionio.IO, stdout, stderr io.Writer, deps monitor.Deps) error {
	fs := flag.NewFlagSet("audit-enrollment onboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var req Request
	fs.StringVar(&req.Repository, "repository", "", "owner/name of the repository to enroll (default $ENROLLMENT_REPOSITORY)")
	fs.StringVar(&req.DefaultBranch, "default-branch", "", "expected default branch (default $ENROLLMENT_DEFAULT_BRANCH; empty accepts GitHub's)")
	fs.StringVar(&req.Fork, "fork", "", "expected fork flag, true or false (default $ENROLLMENT_FORK)")
	dispatch := fs.String("allow-workflow-dispatch", "", "true to admit a dispatch-only canary (default $ENROLLMENT_ALLOW_WORKFLOW_DISPATCH, else false)")
	fs.StringVar(&req.EvidenceURL, "evidence-url", "", "URL of the request run (default $ENROLLMENT_EVIDENCE_URL)")
	repo := fs.String("lock-repository", "", "lock repository owner/name (default $GITHUB_REPOSITORY)")
	reqFile := fs.String("request", "", "the request workflow's enrollment-request.json (instead of the flags above)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *reqFile != "" {
		data, err := readFile(*reqFile)
		if err != nil {
			return fmt.Errorf("%w: %v", monitor.ErrUsage, err)
		}
		r, err := DecodeRequest(data)
		if err != nil {
			return err
		}
		r.EvidenceURL = req.EvidenceURL
		req = r
		if req.AllowWorkflowDispatch {
			*dispatch = "true"
		} else {
			*dispatch = "false"
		}
	}
	fromEnv := func(v *string, name string) {
		if *v == "" {
			*v = s.Onboard[name]
		}
	}
	fromEnv(&req.Repository, "ENROLLMENT_REPOSITORY")
	fromEnv(&req.DefaultBranch, "ENROLLMENT_DEFAULT_BRANCH")
	fromEnv(&req.Fork, "ENROLLMENT_FORK")
	fromEnv(dispatch, "ENROLLMENT_ALLOW_WORKFLOW_DISPATCH")
	fromEnv(&req.EvidenceURL, "ENROLLMENT_EVIDENCE_URL")
	switch *dispatch {
	case "", "false":
	case "true":
		req.AllowWorkflowDispatch = true
	default:
		return fmt.Errorf("%w: allow-workflow-dispatch must be true or false", ErrRefused)
	}
	if req.Repository == "" {
		return fmt.Errorf("%w: --repository is required", monitor.ErrUsage)
	}
	env, owner, _, lockRepository, err := lockEnv(s, *repo, true)
	if err != nil {
		return err
	}
	*repo = lockRepository
	ctx, cancel := context.WithTimeout(ctx, monitor.DefaultOverallTimeout)
	defer cancel()
	reader := readerFactory(ctx, s, a, owner, deps)
	gh, err := monitor.NewClient(ctx, env, deps, a.Warning)
	if err != nil {
		return err
	}
	o := &Onboarder{LockRepository: *repo, Lock: gh, Reader: reader, Now: deps.ClockOrReal().Now}
	res, err := o.Onboard(ctx, req)
	if err != nil {
		return err
	}
	verb := "opened"
	if res.Existing {
		verb = "already open"
	}
	fmt.Fprintf(stdout, "audit-enrollment: %s registered on branch %s at head %s: pull request #%d %s (%s; %d findings)\n",
		res.Row.Repository, res.Branch, res.Head, res.PullRequest, res.URL, verb, len(res.Preview.Findings))
	_ = a.Summary(fmt.Sprintf("### Enrollment of %s\n\nPull request #%d (%s): %s\n", res.Row.Repository, res.PullRequest, verb, res.URL))
	return nil
}

// readFile and writeFile are the command's only file access (paths from
// flags).
func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxArtifactBytes+1))
}

func writeFile(p string, data []byte) error { return os.WriteFile(p, data, 0o644) }
