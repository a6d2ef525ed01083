package preflight

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

// Input names of check-unity-runner-availability.
const (
	InputReaderAppID         = "reader-app-id"
	InputReaderAppPrivateKey = "reader-app-private-key"
	InputOwner               = "owner"
	InputRequiredLabelSets   = "required-label-sets"
)

// Input refusal codes beyond actionio's.
const (
	// CodeOwnerNotCaller: owner names another account than the calling
	// repository's owner.
	CodeOwnerNotCaller = "owner-not-caller"
	// CodeRepository: GITHUB_REPOSITORY is not a usable owner/name.
	CodeRepository = "calling-repository"
)

var (
	appIDRE = regexp.MustCompile(`^[1-9][0-9]*$`)
	// ownerRE is GitHub's login grammar: 1-39 alphanumerics or single
	// hyphens, not starting with a hyphen.
	ownerRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`)
	repoNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// Inputs are the validated inputs of one preflight.
type Inputs struct {
	// Owner is the organization whose runners are checked: the calling
	// repository's owner.
	Owner string
	// Repository is the calling repository's name (visible_to_repository).
	Repository string
	// LabelSets are the required label sets.
	LabelSets []runners.LabelSet
	// AppID and PrivateKey are the reader App's credentials. The key is
	// masked as soon as it is read and parsed only by ghclient.
	AppID      int64
	PrivateKey []byte
}

// ReadInputs reads and validates every input before any credential is
// parsed: the calling repository (GITHUB_REPOSITORY, owner/name with a name
// of [A-Za-z0-9_.-]+ other than "." and ".."), owner (default: the calling
// repository's owner; another owner is refused), required-label-sets, the
// reader App id (^[1-9][0-9]*$) and the presence of its key. The key is
// masked first, so no refusal can print it.
func ReadInputs(a *actionio.IO) (Inputs, error) {
	key := a.RawInput(InputReaderAppPrivateKey)
	maskKey(a, key)

	var in Inputs
	owner, name, ok := strings.Cut(jsinput.Env(a, "GITHUB_REPOSITORY"), "/")
	if !ok || !ownerRE.MatchString(owner) || !repoNameRE.MatchString(name) || name == "." || name == ".." {
		return in, &actionio.InputError{Input: "GITHUB_REPOSITORY", Code: CodeRepository, Message: "must be the calling repository as OWNER/NAME"}
	}
	in.Owner, in.Repository = owner, name
	if v := jsinput.Input(a, InputOwner); v != "" {
		if !ownerRE.MatchString(v) {
			return in, &actionio.InputError{Input: InputOwner, Code: actionio.CodePatternMismatch, Message: "must be a GitHub organization login"}
		}
		if !strings.EqualFold(v, owner) {
			return in, &actionio.InputError{Input: InputOwner, Code: CodeOwnerNotCaller,
				Message: "must be the calling repository's owner (" + owner + "): a repository may only check the runners of its own organization"}
		}
	}

	raw := jsinput.Input(a, InputRequiredLabelSets)
	if raw == "" {
		return in, &actionio.InputError{Input: InputRequiredLabelSets, Code: actionio.CodeRequired, Message: `is required, e.g. [["self-hosted","Windows","X64","unity"]]`}
	}
	sets, err := runners.ParseLabelSets(raw)
	if err != nil {
		return in, err
	}
	in.LabelSets = sets

	rawID := jsinput.Input(a, InputReaderAppID)
	switch {
	case rawID == "":
		return in, &actionio.InputError{Input: InputReaderAppID, Code: actionio.CodeRequired, Message: "is required (the reader GitHub App's id)"}
	case !appIDRE.MatchString(rawID):
		return in, &actionio.InputError{Input: InputReaderAppID, Code: actionio.CodePatternMismatch, Message: "must match ^[1-9][0-9]*$"}
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		return in, &actionio.InputError{Input: InputReaderAppID, Code: actionio.CodePatternMismatch, Message: "is out of range"}
	}
	in.AppID = id
	if jsstr.Trim(key) == "" {
		return in, &actionio.InputError{Input: InputReaderAppPrivateKey, Code: actionio.CodeRequired, Message: "is required (the reader GitHub App's private key)"}
	}
	in.PrivateKey = []byte(key)
	return in, nil
}

// maskKey registers the key with the runner's log redaction, line by line,
// including the lines of a key pasted with literal "\n" separators (which
// ghclient converts).
func maskKey(a *actionio.IO, key string) {
	if jsstr.Trim(key) == "" {
		return
	}
	a.Mask(key)
	if !strings.Contains(key, "\n") && strings.Contains(key, `\n`) {
		for _, line := range strings.Split(key, `\n`) {
			if line = jsstr.Trim(line); len(line) > 8 && !strings.HasPrefix(line, "-----") {
				a.Mask(line)
			}
		}
	}
}
