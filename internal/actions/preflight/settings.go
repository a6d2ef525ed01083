package preflight

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
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

// Settings is everything check-unity-runner-availability reads from the
// environment, read once by LoadSettings before any request.
type Settings struct {
	// Inputs are the validated inputs.
	Inputs Inputs
	// RawKey is the reader-app-private-key input as given, masked by Run
	// before anything else is printed (even when a setting is refused).
	RawKey string
	// APIURL is GITHUB_API_URL trimmed ("" is ghclient's default).
	APIURL string
	// Files are the step's file-command paths (the outputs and summary are
	// skipped when unset, as before).
	Files edgesettings.Files
}

// LoadSettings reads and validates every input before any credential is
// parsed: the calling repository (GITHUB_REPOSITORY, owner/name with a name
// of [A-Za-z0-9_.-]+ other than "." and ".."), owner (default: the calling
// repository's owner; another owner is refused), required-label-sets, the
// reader App id (^[1-9][0-9]*$) and the presence of its key. Every problem
// is listed in one *edgesettings.Error, in that order (its code is the
// first one's). No message quotes the key.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	s := Settings{RawKey: edgesettings.Input(getenv, InputReaderAppPrivateKey), APIURL: jsinput.Value(getenv("GITHUB_API_URL")),
		Files: edgesettings.ReadFiles(getenv)}
	in := func(name string) string { return jsinput.Value(edgesettings.Input(getenv, name)) }
	owner, name, ok := strings.Cut(jsinput.Value(getenv("GITHUB_REPOSITORY")), "/")
	if !ok || !ownerRE.MatchString(owner) || !repoNameRE.MatchString(name) || name == "." || name == ".." {
		p.Add(&actionio.InputError{Input: "GITHUB_REPOSITORY", Code: CodeRepository, Message: "must be the calling repository as OWNER/NAME"})
	} else {
		s.Inputs.Owner, s.Inputs.Repository = owner, name
	}
	if v := in(InputOwner); v != "" {
		switch {
		case !ownerRE.MatchString(v):
			p.Add(&actionio.InputError{Input: InputOwner, Code: actionio.CodePatternMismatch, Message: "must be a GitHub organization login"})
		case s.Inputs.Owner != "" && !strings.EqualFold(v, owner):
			p.Add(&actionio.InputError{Input: InputOwner, Code: CodeOwnerNotCaller,
				Message: "must be the calling repository's owner (" + owner + "): a repository may only check the runners of its own organization"})
		}
	}

	if raw := in(InputRequiredLabelSets); raw == "" {
		p.Add(&actionio.InputError{Input: InputRequiredLabelSets, Code: actionio.CodeRequired, Message: `is required, e.g. [["self-hosted","Windows","X64","unity"]]`})
	} else if sets, err := runners.ParseLabelSets(raw); err != nil {
		p.Add(err)
	} else {
		s.Inputs.LabelSets = sets
	}

	rawID := in(InputReaderAppID)
	switch {
	case rawID == "":
		p.Add(&actionio.InputError{Input: InputReaderAppID, Code: actionio.CodeRequired, Message: "is required (the reader GitHub App's id)"})
	case !appIDRE.MatchString(rawID):
		p.Add(&actionio.InputError{Input: InputReaderAppID, Code: actionio.CodePatternMismatch, Message: "must match ^[1-9][0-9]*$"})
	default:
		id, err := strconv.ParseInt(rawID, 10, 64)
		if err != nil {
			p.Add(&actionio.InputError{Input: InputReaderAppID, Code: actionio.CodePatternMismatch, Message: "is out of range"})
		}
		s.Inputs.AppID = id
	}
	if jsstr.Trim(s.RawKey) == "" {
		p.Add(&actionio.InputError{Input: InputReaderAppPrivateKey, Code: actionio.CodeRequired, Message: "is required (the reader GitHub App's private key)"})
	} else {
		s.Inputs.PrivateKey = []byte(s.RawKey)
	}
	return s, p.Err()
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
