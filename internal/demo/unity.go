package demo

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/preflight"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/requirevalidation"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// The hosted half's demo world.
const (
	unityRepo      = "game-a"
	unityRepoID    = 90101
	readerApp      = 4343
	unityLabelSets = `[["self-hosted","Windows","X64","unity"],["self-hosted","macOS","unity"]]`
)

// UnitySummary is the result of RunUnity (`buildlock demo --unity --json`).
type UnitySummary struct {
	Preflight UnityPreflight `json:"preflight"`
	// Changes are the classified pull requests, in the order run.
	Changes []UnityChange `json:"changes"`
	// Gates are the aggregate gate's verdicts for those pull requests.
	Gates []UnityGate `json:"gates"`
	// Requests is every API request the emulator served.
	Requests int64 `json:"requests"`
}

// UnityPreflight is the preflight's result.
type UnityPreflight struct {
	Passed     bool   `json:"passed"`
	Error      string `json:"error,omitempty"`
	Registered string `json:"registered_runner_count"`
	Online     string `json:"online_runner_count"`
	Busy       string `json:"busy_runner_count"`
	Matched    string `json:"matched_runners"`
	Warnings   int    `json:"warnings"`
	Requests   int64  `json:"requests"`
	TokenMints int64  `json:"token_mints"`
}

// UnityChange is one classified pull request.
type UnityChange struct {
	Name          string   `json:"name"`
	Paths         []string `json:"paths"`
	UnityRequired string   `json:"unity_required"`
	Error         string   `json:"error,omitempty"`
	Log           string   `json:"log"`
}

// UnityGate is one verdict of require-unity-validation.
type UnityGate struct {
	Name  string `json:"name"`
	Safe  bool   `json:"safe"`
	Error string `json:"error,omitempty"`
}

// OK reports the expected story: the preflight finds a runner for both
// label sets and warns about the one that waits on an offline runner, the
// docs-only change skips Unity, the Assets/ change requires it, and the gate
// accepts the audited skip but not a skipped licensed job for Assets/.
func (s *UnitySummary) OK() bool {
	if s == nil || !s.Preflight.Passed || len(s.Changes) != 2 || len(s.Gates) != 2 {
		return false
	}
	return s.Preflight.Warnings == 1 && s.Changes[0].UnityRequired == "false" && s.Changes[1].UnityRequired == "true" && s.Gates[0].Safe && !s.Gates[1].Safe
}

// RunUnity runs the hosted half of the Unity lifecycle against the embedded
// emulator, through the real actions: check-unity-runner-availability
// against an organization with runner groups (one not visible to the
// repository), then classify-unity-changes on a real git repository for a
// docs-only and an Assets/ pull request, then require-unity-validation for
// the licensed job skipped in both. It needs git (classifychanges.FindGit).
func RunUnity(ctx context.Context, out io.Writer, quiet bool) (*UnitySummary, error) {
	say := func(format string, args ...any) {
		if !quiet {
			fmt.Fprintf(out, format, args...)
		}
	}
	em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: 11, SecondaryLimits: emulator.GitHubSecondaryLimits()})
	em.AddOwner(owner, ownerID, true)
	em.AddRepo(owner, unityRepo, unityRepoID, "main")
	em.AddRepo(owner, "tools", unityRepoID+1, "main")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate app key: %w", err)
	}
	em.AddApp(readerApp, &key.PublicKey)
	em.InstallApp(readerApp, owner, nil)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	unity := em.AddRunnerGroup(owner, emulator.RunnerGroup{Name: "unity", Visibility: emulator.VisibilitySelected, SelectedRepos: []string{unityRepo}})
	labels := []string{"self-hosted", "Windows", "X64", "unity"}
	em.AddRunner(owner, unity, emulator.Runner{Name: "win-unity-1", OS: "Windows", Labels: labels})
	em.AddRunner(owner, unity, emulator.Runner{Name: "win-unity-2", OS: "Windows", Busy: true, Labels: labels})
	em.AddRunner(owner, unity, emulator.Runner{Name: "win-unity-3", OS: "Windows", Status: "offline", Labels: labels})
	em.AddRunner(owner, unity, emulator.Runner{Name: "mac-unity-1", OS: "macOS", Status: "offline", Labels: []string{"self-hosted", "macOS", "ARM64", "unity"}})
	other := em.AddRunnerGroup(owner, emulator.RunnerGroup{Name: "tools-team", Visibility: emulator.VisibilitySelected, SelectedRepos: []string{"tools"}})
	em.AddRunner(owner, other, emulator.Runner{Name: "win-tools-1", OS: "Windows", Labels: labels})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	srvDone := make(chan error, 1)
	go func() { srvDone <- em.Serve(srvCtx, l) }()
	defer func() {
		stopServer()
		<-srvDone
	}()
	apiURL := "http://" + l.Addr().String()
	dir, err := os.MkdirTemp("", "buildlock-demo-unity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	say("build-lock demo --unity: the hosted half of the Unity lifecycle, through the real actions\n")
	say("emulated GitHub API at %s: organization %s, repository %s/%s, runner group unity (4 runners, visible) and tools-team (1 runner, not visible)\n\n", apiURL, owner, owner, unityRepo)

	sum := &UnitySummary{}
	env := func(name string) map[string]string {
		d := filepath.Join(dir, name)
		_ = os.MkdirAll(d, 0o700)
		return map[string]string{
			"GITHUB_REPOSITORY": owner + "/" + unityRepo, "GITHUB_API_URL": apiURL, "GITHUB_EVENT_NAME": "pull_request",
			"GITHUB_OUTPUT": filepath.Join(d, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(d, "summary"),
		}
	}

	// 1. The runner preflight.
	say("1. check-unity-runner-availability (cmd/preflight), required-label-sets %s\n", unityLabelSets)
	pe := env("preflight")
	pe["INPUT_READER-APP-ID"] = strconv.Itoa(readerApp)
	pe["INPUT_READER-APP-PRIVATE-KEY"] = keyPEM
	pe["INPUT_REQUIRED-LABEL-SETS"] = unityLabelSets
	log, err := runStep(ctx, preflight.Run, pe)
	m := em.Metrics()
	sum.Preflight = UnityPreflight{Passed: err == nil, Requests: m.Requests, Warnings: strings.Count(log, "::warning::"),
		TokenMints: m.Routes["POST /app/installations/{installation_id}/access_tokens"].Requests}
	if err != nil {
		sum.Preflight.Error = err.Error()
	}
	outs, _ := actionio.ReadFileCommands(pe["GITHUB_OUTPUT"])
	sum.Preflight.Registered, sum.Preflight.Online, sum.Preflight.Busy, sum.Preflight.Matched =
		outs[preflight.OutputRegisteredRunnerCount], outs[preflight.OutputOnlineRunnerCount], outs[preflight.OutputBusyRunnerCount], outs[preflight.OutputMatchedRunners]
	say("%s", indentCommands(log))
	if err != nil {
		say("   → FAILED: %v\n\n", err)
	} else {
		say("   → passed with one reader token (organization_self_hosted_runners: read only) in %d requests: %s registered runner(s), %s online, %s busy; matched-runners=%s\n\n",
			sum.Preflight.Requests, sum.Preflight.Registered, sum.Preflight.Online, sum.Preflight.Busy, sum.Preflight.Matched)
	}

	// 2. The change classifier, on a real git repository.
	say("2. classify-unity-changes (cmd/classify changes), real git in a temporary repository, independent-paths: docs/**\n")
	repo := filepath.Join(dir, "repo")
	commits, err := demoRepository(ctx, repo)
	if err != nil {
		return sum, err
	}
	for _, c := range []struct {
		name      string
		base, sha string
		paths     []string
	}{
		{"docs-only pull request", commits[0], commits[1], []string{"README.md", "docs/guide.md"}},
		{"Assets/ pull request", commits[1], commits[2], []string{"README.md", "Assets/Player.cs"}},
	} {
		ce := env("classify-" + strconv.Itoa(len(sum.Changes)))
		ce["GITHUB_WORKSPACE"] = repo
		ce["INPUT_EVENT-NAME"] = "pull_request"
		ce["INPUT_BASE-SHA"], ce["INPUT_HEAD-SHA"] = c.base, c.sha
		ce["INPUT_INDEPENDENT-PATHS"] = "docs/**"
		log, err := runStep(ctx, classifychanges.Run, ce)
		outs, _ := actionio.ReadFileCommands(ce["GITHUB_OUTPUT"])
		ch := UnityChange{Name: c.name, Paths: c.paths, UnityRequired: outs[classifychanges.OutputUnityRequired], Log: strings.TrimSpace(log)}
		if err != nil {
			ch.Error = err.Error()
		}
		sum.Changes = append(sum.Changes, ch)
		say("   %s (%s): unity-required=%s\n%s", c.name, strings.Join(c.paths, ", "), ch.UnityRequired, indentCommands(log))
	}
	say("\n")

	// 3. The aggregate gate, with the licensed job skipped in both cases.
	say("3. require-unity-validation (cmd/require-unity-validation), the licensed job skipped in both\n")
	for i, ch := range sum.Changes {
		ge := env("gate-" + strconv.Itoa(i))
		for k, v := range map[string]string{
			"static-validation-result": "success", "classifier-result": "success", "unity-required": ch.UnityRequired, "trusted-revision": "true",
			"preflight-result": "success", "unity-result": "skipped", "fallback-result": "skipped", "fallback-cleanup-result": "",
		} {
			ge["INPUT_"+strings.ToUpper(k)] = v
		}
		_, err := runStep(ctx, requirevalidation.Run, ge)
		g := UnityGate{Name: ch.Name, Safe: err == nil}
		if err != nil {
			g.Error = err.Error()
			say("   %s: unsafe: %v\n", ch.Name, err)
		} else {
			say("   %s: safe (audited non-Unity skip)\n", ch.Name)
		}
		sum.Gates = append(sum.Gates, g)
	}
	sum.Requests = em.Metrics().Requests
	if !quiet {
		verdict := "OK"
		if !sum.OK() {
			verdict = "UNEXPECTED"
		}
		say("\n%s: the preflight found a registered runner for both label sets and warned about the one that waits on an offline runner, the classifier skipped the docs-only change and required Unity for the Assets/ change, and the gate accepted only the modeled skip.\n", verdict)
	}
	return sum, nil
}

// runStep runs one action in-process with env and returns its log.
func runStep(ctx context.Context, run func(context.Context, actionkit.Deps) error, env map[string]string) (string, error) {
	var log actionio.SyncBuffer
	err := run(ctx, actionkit.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &log})
	return log.String(), err
}

// indentCommands keeps the workflow commands a reader cares about
// (warnings, notices, errors) and indents them under the step.
func indentCommands(log string) string {
	var b strings.Builder
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "::warning") || strings.HasPrefix(line, "::notice") || strings.HasPrefix(line, "::error") {
			b.WriteString("   | ")
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// demoRepository creates a git repository with three commits: the base, a
// docs-only change and an Assets/ change. It returns their SHAs.
func demoRepository(ctx context.Context, dir string) ([]string, error) {
	git, err := classifychanges.FindGit()
	if err != nil {
		return nil, fmt.Errorf("the Unity demo classifies a real git repository: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, git, append([]string{"-c", "user.name=demo", "-c", "user.email=demo@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = classifychanges.GitEnv()
		b, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(b)))
		}
		return strings.TrimSpace(string(b)), nil
	}
	write := func(path, content string) error {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	commit := func(msg string, files map[string]string) (string, error) {
		for p, c := range files {
			if err := write(p, c); err != nil {
				return "", err
			}
		}
		if _, err := run("add", "-A"); err != nil {
			return "", err
		}
		if _, err := run("commit", "-q", "-m", msg); err != nil {
			return "", err
		}
		return run("rev-parse", "HEAD")
	}
	if _, err := run("init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	var shas []string
	for _, c := range []struct {
		msg   string
		files map[string]string
	}{
		{"base", map[string]string{"README.md": "# game\n", "docs/guide.md": "guide\n", "Assets/Player.cs": "class Player {}\n"}},
		{"docs only", map[string]string{"README.md": "# game, documented\n", "docs/guide.md": "a longer guide\n"}},
		{"gameplay", map[string]string{"README.md": "# game 2\n", "Assets/Player.cs": "class Player { int hp; }\n"}},
	} {
		sha, err := commit(c.msg, c.files)
		if err != nil {
			return nil, err
		}
		shas = append(shas, sha)
	}
	return shas, nil
}

// RenderUnityJSON writes s as indented JSON.
func RenderUnityJSON(w io.Writer, s *UnitySummary) error {
	if s == nil {
		return errors.New("no summary")
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
