package policy

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// LockRepositoryOptions configures AuditLockRepository.
type LockRepositoryOptions struct {
	// LockRepository is "owner/name" of the audited lock repository (its
	// own actions referenced remotely are lock actions).
	LockRepository string
	// UnityPaths are the path prefixes (e.g. ".github/actions/return-unity-license/")
	// allowed to name Unity credentials or game-ci Unity actions.
	UnityPaths []string
	// Gaps are what the reader could not audit (snapshot.DotGitHub): each
	// is a finding (a symbolic link, a file over 1 MiB, an unreadable file).
	Gaps []Gap
}

// DefaultUnityPaths are the lock repository's own Unity actions, the only
// files that may handle Unity credentials.
var DefaultUnityPaths = []string{
	".github/actions/" + ActReturn + "/", ".github/actions/" + ActValidateLicense + "/",
	".github/actions/" + ActEditor + "/", ".github/actions/" + ActClassifier + "/",
}

// lockWriters are the actions that change lock state: a job using one can
// hold or free a seat, so rule 10 applies to it.
var lockWriters = map[string]bool{ActAcquire: true, ActAcquireWithCleanup: true, ActRelease: true, ActReap: true, ActRecover: true}

// AuditLockRepository runs the lock repository's own audits over files:
// every .yml/.yaml under .github/ (workflows and action metadata), keyed by
// repository-relative path. Checks: the cancellation policy (rule 10) of
// every job that can change lock state; credential literals in every env:
// mapping; Unity credentials and game-ci Unity actions only in the
// registered paths; no ${{ }} inside run: (secrets and github.token are
// their own code); no credentialed URLs; every remote uses: pinned;
// actions/checkout with persist-credentials: false; no pull_request_target
// checkout of pull request code; a top-level permissions block and no
// write-all; a timeout on every job. Findings name the env variable (ASCII
// quoted) but never a value.
func AuditLockRepository(files map[string][]byte, opts LockRepositoryOptions) []Finding {
	if opts.UnityPaths == nil {
		opts.UnityPaths = DefaultUnityPaths
	}
	a := &analysis{snap: Snapshot{Files: files}, lockRepo: opts.LockRepository, wfByPath: map[string]*workflow{}, actions: map[string]*action{}}
	for _, g := range opts.Gaps {
		switch g.Reason {
		case "not-a-regular-file":
			a.add(SymlinkedFile, g.Path, "", 0)
		case "too-large":
			a.add(OversizedFile, g.Path, "", 0)
		default:
			a.addDetail(RepositoryAnalysisIncomplete, g.Path, "", 0, "unreadable")
		}
	}
	var paths []string
	for p := range files {
		if strings.HasPrefix(p, ".github/") && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		src := files[p]
		root := rawRoot(src)
		if root == nil {
			a.addDetail(RepositoryAnalysisIncomplete, p, "", 1, "parse-error")
			continue
		}
		metadata := path.Base(p) == "action.yml" || path.Base(p) == "action.yaml"
		a.rawAudit(p, root, metadata, opts)
		if isWorkflowFile(p) {
			a.lockWorkflowAudit(parseWorkflow(p, src))
		}
		if metadata {
			a.actionAudit(p, root)
		}
	}
	return sortFindings(a.findings)
}

var (
	credWordRE   = regexp.MustCompile(`(^|_)(API_KEY|ACCESS_KEY|CREDENTIAL|PASSWORD|PASSWD|PRIVATE_KEY|SECRET|TOKEN)(_|$)`)
	credValueRES = []*regexp.Regexp{
		regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}`),
		regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`),
		regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b`),
		regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`),
		regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.`),
		regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`),
	}
	base64RunRE     = regexp.MustCompile(`[A-Za-z0-9+/=_-]{32,}`)
	letterRE        = regexp.MustCompile(`[A-Za-z]`)
	digitRE         = regexp.MustCompile(`[0-9]`)
	credentialURLRE = regexp.MustCompile(`(?i)https?://[^\s/@"'<>]+@[^\s/"'<>]`)
	gameCIUsesRE    = regexp.MustCompile(`(?i)game-ci/unity-(test-runner|builder|activate)@`)
)

// credentialShapedName reports whether an env name holds a credential word
// as a _-separated word (TOKEN in GITHUB_TOKEN, not in TOKENIZER).
func credentialShapedName(name string) bool { return credWordRE.MatchString(strings.ToUpper(name)) }

// credentialShapedValue reports whether a value's literal text (outside
// ${{ }}) looks like a credential.
func credentialShapedValue(v string) bool {
	lit := v
	if ps, err := parseTemplate(v); err == nil {
		var b strings.Builder
		for _, p := range ps {
			b.WriteString(p.lit)
			b.WriteString(" ")
		}
		lit = b.String()
	}
	for _, re := range credValueRES {
		if re.MatchString(lit) {
			return true
		}
	}
	for _, run := range base64RunRE.FindAllString(lit, -1) {
		if letterRE.MatchString(run) && digitRE.MatchString(run) {
			return true
		}
	}
	return false
}

// quoteName is the safe rendering of an env name in a finding: ASCII-only
// Go quoting with ':' escaped too, so it can never forge a path:line:
// prefix or a workflow command.
func quoteName(name string) string {
	return strings.ReplaceAll(strconv.QuoteToASCII(name), ":", `\x3a`)
}

// credentialReference reports whether v is exactly ${{ secrets.NAME }} or
// ${{ github.token }} (or, in action metadata, ${{ inputs.NAME }}: a
// composite action passing its own input through).
func credentialReference(v string, metadata bool) bool {
	e := singleExpr(v)
	if e == nil {
		return false
	}
	r := render(e)
	if r == "github.token" {
		return true
	}
	for _, prefix := range []string{"secrets.", "inputs."} {
		if name, ok := strings.CutPrefix(r, prefix); ok && (prefix == "secrets." || metadata) && name != "" && !strings.ContainsAny(name, ".[(") {
			return true
		}
	}
	return false
}

func (a *analysis) registeredUnity(p string, opts LockRepositoryOptions) bool {
	for _, prefix := range opts.UnityPaths {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// rawAudit walks every node of one file: env mappings, uses: values and
// every scalar (credentialed URLs).
func (a *analysis) rawAudit(p string, root *yaml.Node, metadata bool, opts LockRepositoryOptions) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode && credentialURLRE.MatchString(n.Value) {
			a.add(CredentialedURL, p, "", n.Line)
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if n == root && k.Value == "on" {
					continue // workflow_dispatch inputs may be named env
				}
				switch k.Value {
				case "env":
					a.envAudit(p, v, metadata, opts)
				case "uses":
					if v.Kind == yaml.ScalarNode && gameCIUsesRE.MatchString(v.Value) && !a.registeredUnity(p, opts) {
						a.add(UnityCredentialOutsideRegisteredPath, p, "", v.Line)
					}
				}
			}
		}
		for i, c := range n.Content {
			if n == root && n.Kind == yaml.MappingNode && i%2 == 1 && n.Content[i-1].Value == "on" {
				continue
			}
			walk(c)
		}
	}
	walk(root)
}

func (a *analysis) envAudit(p string, env *yaml.Node, metadata bool, opts LockRepositoryOptions) {
	if env.Kind != yaml.MappingNode {
		a.add(UnsupportedEnvMapping, p, "", env.Line)
		return
	}
	for i := 0; i+1 < len(env.Content); i += 2 {
		k, v := env.Content[i], env.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "<<" || k.Tag == "!!merge" || v.Kind != yaml.ScalarNode {
			a.addDetail(UnsupportedEnvMapping, p, "", k.Line, quoteName(k.Value))
			continue
		}
		name := k.Value
		if credentialShapedName(name) && !credentialReference(v.Value, metadata) {
			a.addDetail(CredentialLiteral, p, "", k.Line, quoteName(name))
		} else if credentialShapedValue(v.Value) {
			a.addDetail(CredentialLiteral, p, "", k.Line, quoteName(name))
		}
		if (credNameRE.MatchString(name) || credentialRef(v.Value)) && !a.registeredUnity(p, opts) {
			a.addDetail(UnityCredentialOutsideRegisteredPath, p, "", k.Line, quoteName(name))
		}
	}
}

// runAudit: no ${{ }} inside run: scripts.
func (a *analysis) runAudit(p, jobID string, line int, run string) {
	if !strings.Contains(run, "${{") {
		return
	}
	secret := false
	for _, r := range contextRefs(run) {
		if strings.HasPrefix(r, "secrets.") || r == "secrets" || r == "github.token" {
			secret = true
		}
	}
	if secret {
		a.add(SecretInRun, p, jobID, line)
	} else {
		a.add(ExpressionInRun, p, jobID, line)
	}
}

func (a *analysis) usesAudit(p, jobID string, line int, u *usesRef) {
	if (u.kind == usesRemote || u.kind == usesDocker) && !u.pinned() {
		a.add(UnpinnedUses, p, jobID, line)
	}
}

// lockWorkflowAudit checks one workflow of the lock repository.
func (a *analysis) lockWorkflowAudit(w *workflow) {
	if w.broken {
		a.addDetail(RepositoryAnalysisIncomplete, w.path, "", w.errLine, "parse-error")
		return
	}
	perms := rawKey(w.raw, "permissions")
	if perms == nil {
		a.add(ExcessivePermissions, w.path, "", 1)
	}
	a.hygieneRules(w, true)
	writes := false
	for _, j := range w.jobs {
		if j.call != nil {
			a.usesAudit(w.path, j.id, j.line(), j.call)
			continue
		}
		if rawGet(j.raw, "timeout-minutes") == nil {
			a.add(MissingJobTimeout, w.path, j.id, j.line())
		}
		reaches := false
		for _, s := range j.steps {
			if s.uses != nil {
				a.usesAudit(w.path, j.id, s.line(), s.uses)
				name := ""
				switch {
				case s.uses.kind == usesLocal && strings.HasPrefix(s.uses.path, ".github/actions/"):
					name = strings.TrimPrefix(s.uses.path, ".github/actions/")
				case a.isLockRef(s.uses):
					name = s.uses.lockName()
				}
				if lockWriters[name] {
					reaches = true
				}
				if s.uses.isCheckout() && strings.TrimSpace(s.with["persist-credentials"]) != "false" {
					a.add(CheckoutPersistsCredentials, w.path, j.id, s.line())
				}
			}
		}
		if reaches {
			writes = true
			a.jobCancellation(j)
		}
	}
	if writes {
		a.workflowCancellation(w)
	}
}

// actionAudit checks one action metadata file of the lock repository:
// pinned uses:, no ${{ }} in run: of composite steps, no secret in shell:
// or a github-script script:, no expression in uses:.
func (a *analysis) actionAudit(p string, root *yaml.Node) {
	steps := rawPath(root, "runs", "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return
	}
	for _, sn := range steps.Content {
		var ref *usesRef
		if u := rawGet(sn, "uses"); u != nil && u.Kind == yaml.ScalarNode {
			r := parseUses(u.Value)
			ref = &r
			a.usesAudit(p, "", u.Line, ref)
		}
		run, line := "", sn.Line
		if r := rawGet(sn, "run"); r != nil && r.Kind == yaml.ScalarNode {
			run, line = r.Value, r.Line
		}
		a.stepHygiene(p, "", line, run, shellOf(sn), ref, scalarMap(rawGet(sn, "with")), true)
	}
}
