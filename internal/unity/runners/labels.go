package runners

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// Bounds of the required-label-sets declaration. GitHub itself caps a
// runs-on label list far below these; they only keep a hostile input from
// costing memory or log space.
const (
	// MaxLabelSetsBytes bounds the raw JSON input.
	MaxLabelSetsBytes = 64 << 10
	// MaxLabelSets bounds the number of label sets.
	MaxLabelSets = 64
	// MaxLabelsPerSet bounds the labels of one set.
	MaxLabelsPerSet = 64
	// MaxLabelBytes bounds one label.
	MaxLabelBytes = 256
	// SelfHostedLabel is the label every set must carry: the preflight only
	// speaks for self-hosted runners (GitHub-hosted ones are not listed by
	// the runner-group API).
	SelfHostedLabel = "self-hosted"
)

// Stable codes of a [LabelSetError].
const (
	CodeLabelSetsTooLarge      = "label-sets-too-large"
	CodeLabelSetsNotJSON       = "label-sets-not-json"
	CodeLabelSetsNotArray      = "label-sets-not-array"
	CodeLabelSetsEmpty         = "label-sets-empty"
	CodeLabelSetsTooMany       = "label-sets-too-many"
	CodeLabelSetNotArray       = "label-set-not-array"
	CodeLabelSetEmpty          = "label-set-empty"
	CodeLabelSetTooMany        = "label-set-too-many-labels"
	CodeLabelNotString         = "label-not-string"
	CodeLabelEmpty             = "label-empty"
	CodeLabelUntrimmed         = "label-untrimmed"
	CodeLabelControlCharacter  = "label-control-character"
	CodeLabelTooLong           = "label-too-long"
	CodeLabelDuplicate         = "label-duplicate"
	CodeLabelSetNoSelfHosted   = "label-set-without-self-hosted"
	labelSetsInput             = "required-label-sets"
	labelSetsExampleForMessage = `[["self-hosted","Windows","X64","unity"]]`
)

// LabelSet is one required set of runner labels, lowercased, in declaration
// order, without duplicates. A runner satisfies it when it carries every
// label (compared case-insensitively, as GitHub matches runs-on labels).
type LabelSet []string

// String renders the set as GitHub writes a runs-on list: [a, b, c].
func (s LabelSet) String() string { return "[" + strings.Join(s, ", ") + "]" }

// LabelSetError reports a required-label-sets declaration that breaks a rule.
// Set and Label are 1-based positions (0 when the rule concerns the whole
// input or the whole set). The message never echoes the input.
type LabelSetError struct {
	Code    string
	Set     int
	Label   int
	Message string
}

// Error implements error.
func (e *LabelSetError) Error() string {
	where := ""
	switch {
	case e.Set > 0 && e.Label > 0:
		where = fmt.Sprintf(" (label set %d, label %d)", e.Set, e.Label)
	case e.Set > 0:
		where = fmt.Sprintf(" (label set %d)", e.Set)
	}
	return fmt.Sprintf("input %s: %s%s", labelSetsInput, e.Message, where)
}

// ParseLabelSets parses required-label-sets: a JSON array of non-empty
// arrays of labels (reference-behavior.md §1.7). Each label must be a
// string that is non-empty, already trimmed and free of control characters;
// labels are lowercased; every set must include "self-hosted"; a set may not
// name a label twice (case-insensitively). The outer array must be
// non-empty (unity-lifecycle-facts.md §6). Invalid UTF-8 is refused rather
// than silently replaced.
func ParseLabelSets(raw string) ([]LabelSet, error) {
	if len(raw) > MaxLabelSetsBytes {
		return nil, &LabelSetError{Code: CodeLabelSetsTooLarge, Message: fmt.Sprintf("is longer than %d bytes", MaxLabelSetsBytes)}
	}
	if !utf8.ValidString(raw) {
		return nil, &LabelSetError{Code: CodeLabelSetsNotJSON, Message: "is not valid UTF-8 JSON"}
	}
	var doc any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, &LabelSetError{Code: CodeLabelSetsNotJSON, Message: "must be a JSON array of label arrays, e.g. " + labelSetsExampleForMessage}
	}
	outer, ok := doc.([]any)
	if !ok {
		return nil, &LabelSetError{Code: CodeLabelSetsNotArray, Message: "must be a JSON array of label arrays, e.g. " + labelSetsExampleForMessage}
	}
	if len(outer) == 0 {
		return nil, &LabelSetError{Code: CodeLabelSetsEmpty, Message: "must name at least one label set"}
	}
	if len(outer) > MaxLabelSets {
		return nil, &LabelSetError{Code: CodeLabelSetsTooMany, Message: fmt.Sprintf("names more than %d label sets", MaxLabelSets)}
	}
	sets := make([]LabelSet, 0, len(outer))
	for i, item := range outer {
		set, err := parseSet(i+1, item)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	return sets, nil
}

func parseSet(n int, item any) (LabelSet, error) {
	labels, ok := item.([]any)
	if !ok {
		return nil, &LabelSetError{Code: CodeLabelSetNotArray, Set: n, Message: "every label set must be a JSON array of strings"}
	}
	if len(labels) == 0 {
		return nil, &LabelSetError{Code: CodeLabelSetEmpty, Set: n, Message: "a label set must not be empty"}
	}
	if len(labels) > MaxLabelsPerSet {
		return nil, &LabelSetError{Code: CodeLabelSetTooMany, Set: n, Message: fmt.Sprintf("a label set may name at most %d labels", MaxLabelsPerSet)}
	}
	set := make(LabelSet, 0, len(labels))
	seen := map[string]bool{}
	for j, l := range labels {
		label, err := parseLabel(n, j+1, l)
		if err != nil {
			return nil, err
		}
		if seen[label] {
			return nil, &LabelSetError{Code: CodeLabelDuplicate, Set: n, Label: j + 1, Message: "a label set must not name a label twice (labels compare case-insensitively)"}
		}
		seen[label] = true
		set = append(set, label)
	}
	if !seen[SelfHostedLabel] {
		return nil, &LabelSetError{Code: CodeLabelSetNoSelfHosted, Set: n, Message: `every label set must include "self-hosted"`}
	}
	return set, nil
}

func parseLabel(n, j int, v any) (string, error) {
	s, ok := v.(string)
	switch {
	case !ok:
		return "", &LabelSetError{Code: CodeLabelNotString, Set: n, Label: j, Message: "every label must be a JSON string"}
	case s == "":
		return "", &LabelSetError{Code: CodeLabelEmpty, Set: n, Label: j, Message: "a label must not be empty"}
	case len(s) > MaxLabelBytes:
		return "", &LabelSetError{Code: CodeLabelTooLong, Set: n, Label: j, Message: fmt.Sprintf("a label must not be longer than %d bytes", MaxLabelBytes)}
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", &LabelSetError{Code: CodeLabelControlCharacter, Set: n, Label: j, Message: "a label must not contain control characters"}
	case jsstr.HasEdgeSpace(s):
		return "", &LabelSetError{Code: CodeLabelUntrimmed, Set: n, Label: j, Message: "a label must not have leading or trailing whitespace"}
	}
	return jsstr.ToLower(s), nil
}

// ReasonCode returns Code (the ::error title and job summary code).
func (e *LabelSetError) ReasonCode() string { return e.Code }
