package policy

import (
	"path"
	"regexp"
	"strings"
)

// Lock action names: the directories under .github/actions of the lock
// repository.
const (
	ActAcquire            = "acquire-build-lock"
	ActAcquireWithCleanup = "acquire-build-lock-with-cleanup"
	ActRelease            = "release-build-lock"
	ActGuard              = "require-current-pr-head"
	ActPreflight          = "check-unity-runner-availability"
	ActClassifyChanges    = "classify-unity-changes"
	ActValidation         = "require-unity-validation"
	ActValidateLicense    = "validate-unity-license"
	ActEditor             = "ensure-unity-editor"
	ActReturn             = "return-unity-license"
	ActClassifier         = "classify-unity-cleanup-evidence"
	ActCleanupGate        = "require-confirmed-unity-cleanup"
	ActReap               = "reap-stale-locks"
	ActRecover            = "recover-build-lock"
)

// LockActions lists every action of the lock repository.
var LockActions = []string{ActAcquire, ActAcquireWithCleanup, ActRelease, ActGuard, ActPreflight, ActClassifyChanges,
	ActValidation, ActValidateLicense, ActEditor, ActReturn, ActClassifier, ActCleanupGate, ActReap, ActRecover}

var lockActionSet = func() map[string]bool {
	m := map[string]bool{}
	for _, a := range LockActions {
		m[a] = true
	}
	return m
}()

type usesKind int

const (
	usesInvalid usesKind = iota
	usesLocal            // ./dir (a local action) or ./.github/workflows/x.yml
	usesRemote           // owner/repo[/path]@ref
	usesDocker           // docker://image
)

// usesRef is a parsed uses: value.
type usesRef struct {
	raw   string
	kind  usesKind
	owner string
	repo  string
	path  string // inside the repository ("" for the root); local: cleaned path
	ref   string
	image string // docker
}

var (
	shaPinRE    = regexp.MustCompile(`^[0-9a-f]{40}$`)
	digestPinRE = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	ownerRE     = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoNameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
)

func parseUses(s string) usesRef {
	s = strings.TrimSpace(s)
	u := usesRef{raw: s}
	switch {
	case strings.HasPrefix(s, "./"):
		p := path.Clean(strings.TrimPrefix(s, "./"))
		if p == "." || strings.HasPrefix(p, "../") || p == ".." {
			return u
		}
		u.kind, u.path = usesLocal, p
		return u
	case strings.HasPrefix(s, "docker://"):
		u.kind, u.image = usesDocker, strings.TrimPrefix(s, "docker://")
		return u
	}
	spec, ref, ok := strings.Cut(s, "@")
	if !ok || ref == "" || strings.Contains(ref, "@") {
		return u
	}
	segs := strings.Split(spec, "/")
	if len(segs) < 2 || !ownerRE.MatchString(segs[0]) || !repoNameRE.MatchString(segs[1]) {
		return u
	}
	u.kind, u.owner, u.repo, u.ref = usesRemote, segs[0], segs[1], ref
	u.path = strings.Join(segs[2:], "/")
	return u
}

// repository is "owner/repo" of a remote reference.
func (u usesRef) repository() string { return u.owner + "/" + u.repo }

// pinned reports whether a remote ref is a full commit SHA, or a docker
// image a sha256 digest.
func (u usesRef) pinned() bool {
	switch u.kind {
	case usesRemote:
		return shaPinRE.MatchString(u.ref)
	case usesDocker:
		return digestPinRE.MatchString(u.image)
	}
	return true
}

// lockName is the lock action a remote reference names by its path
// (.github/actions/<name>), whatever repository it comes from; "" if none.
func (u usesRef) lockName() string {
	if u.kind != usesRemote {
		return ""
	}
	name, ok := strings.CutPrefix(u.path, ".github/actions/")
	if !ok || !lockActionSet[name] {
		return ""
	}
	return name
}

// isWorkflow reports whether the reference names a reusable workflow file.
func (u usesRef) isWorkflow() bool {
	p := u.path
	return strings.HasPrefix(p, ".github/workflows/") && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) &&
		!strings.Contains(strings.TrimPrefix(p, ".github/workflows/"), "/")
}

var (
	gameCIUnityRE   = regexp.MustCompile(`(?i)^game-ci/unity-(test-runner|builder|activate|return-license)$`)
	unityishActRE   = regexp.MustCompile(`(?i)unity`)
	unityCredNameRE = regexp.MustCompile(`^UNITY_(SERIAL|EMAIL|PASSWORD|LICENSE|LICENSING_SERVER)`)
)

// isGameCIUnity reports whether the reference is a game-ci Unity action
// (each activates Unity with the credentials in its environment).
func (u usesRef) isGameCIUnity() bool {
	return u.kind == usesRemote && gameCIUnityRE.MatchString(u.repository())
}

// unityShaped reports whether a non-lock action's name mentions Unity.
func (u usesRef) unityShaped() bool {
	return u.kind == usesRemote && unityishActRE.MatchString(u.repository()+"/"+u.path)
}

// isCheckout reports whether the reference is actions/checkout.
func (u usesRef) isCheckout() bool {
	return u.kind == usesRemote && strings.EqualFold(u.repository(), "actions/checkout") && u.path == ""
}
