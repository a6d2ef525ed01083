package actioncontract_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// docs/actions.md carries one generated block per action (its uses: line,
// runtime, inputs and outputs tables), rebuilt from the action.yml files by
// TestActionsReferenceIsCurrent, between these markers. Everything outside
// the blocks is prose written by hand.
const (
	actionsDoc      = "docs/actions.md"
	genBegin        = "<!-- BEGIN GENERATED: %s (from .github/actions/%s/action.yml; UPDATE_GOLDEN=1 go test ./internal/actioncontract -run TestActionsReferenceIsCurrent) -->"
	genEnd          = "<!-- END GENERATED: %s -->"
	stubMarker      = "<!-- TODO(actions-doc): describe this action -->"
	thisRepository  = "Ambiguous-Interactive/ambiguous-organization-build-lock"
	updateGoldenEnv = "UPDATE_GOLDEN"
)

var (
	genBeginRE = regexp.MustCompile(`<!-- BEGIN GENERATED: ([a-z0-9-]+) [^\n]*-->`)
	launchRE   = regexp.MustCompile(`launch\.sh" ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)?)`)
	inputRefRE = regexp.MustCompile(`^\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}$`)
)

// orderedAction is an action.yml with inputs and outputs in declaration
// order (actioncontract.Metadata keeps them in maps).
type orderedAction struct {
	Dir, Name, Description string
	Using, Main, Post      string
	Binary                 string
	Inputs                 []docInput
	Outputs                []docOutput
}

type docInput struct {
	Name, Description string
	Required          bool
	Default           *string
	Env               string
}

type docOutput struct{ Name, Description string }

// mapping returns the key/value node pairs of a YAML mapping node.
func mapping(n *yaml.Node) [][2]*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func field(n *yaml.Node, key string) *yaml.Node {
	for _, kv := range mapping(n) {
		if kv[0].Value == key {
			return kv[1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

func loadOrderedActions(t *testing.T) []orderedAction {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, ".github", "actions", "*", "action.yml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no action.yml files: %v", err)
	}
	sort.Strings(paths)
	var out []orderedAction
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		root := doc.Content[0]
		runs := field(root, "runs")
		a := orderedAction{
			Dir: filepath.Base(filepath.Dir(p)), Name: scalar(field(root, "name")), Description: scalar(field(root, "description")),
			Using: scalar(field(runs, "using")), Main: scalar(field(runs, "main")), Post: scalar(field(runs, "post")),
		}
		envOf := map[string]string{}
		if steps := field(runs, "steps"); steps != nil {
			for _, st := range steps.Content {
				if m := launchRE.FindStringSubmatch(scalar(field(st, "run"))); m != nil {
					a.Binary = m[1]
				}
				for _, kv := range mapping(field(st, "env")) {
					if m := inputRefRE.FindStringSubmatch(kv[1].Value); m != nil {
						envOf[m[1]] = kv[0].Value
					}
				}
			}
		}
		for _, kv := range mapping(field(root, "inputs")) {
			in := docInput{Name: kv[0].Value, Description: scalar(field(kv[1], "description"))}
			in.Required = scalar(field(kv[1], "required")) == "true"
			if d := field(kv[1], "default"); d != nil {
				v := d.Value
				in.Default = &v
			}
			if a.Using == "composite" {
				in.Env = envOf[in.Name]
			} else {
				// The runner's own spelling for JavaScript actions: hyphens kept.
				in.Env = "INPUT_" + strings.ToUpper(strings.ReplaceAll(in.Name, " ", "_"))
			}
			a.Inputs = append(a.Inputs, in)
		}
		for _, kv := range mapping(field(root, "outputs")) {
			a.Outputs = append(a.Outputs, docOutput{Name: kv[0].Value, Description: scalar(field(kv[1], "description"))})
		}
		out = append(out, a)
	}
	return out
}

// cellEscaper keeps a description literal inside a Markdown table cell:
// "locks/<name>.json" would otherwise lose "<name>" as an HTML tag.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`)

// cell makes s safe inside one Markdown table cell (one line, escaped).
func cell(s string) string {
	return cellEscaper.Replace(strings.Join(strings.Fields(s), " "))
}

// generatedBlock renders the generated part of one action's section,
// markers included.
func generatedBlock(a orderedAction) string {
	var b strings.Builder
	fmt.Fprintf(&b, genBegin+"\n\n", a.Dir, a.Dir)
	fmt.Fprintf(&b, "`uses: %s/.github/actions/%s@<40-hex commit SHA>`\n\n", thisRepository, a.Dir)
	fmt.Fprintf(&b, "**%s.** %s\n\n", cell(a.Name), cell(a.Description))
	switch {
	case a.Using == "composite":
		fmt.Fprintf(&b, "Runs as a `composite` action: one `bash` step that execs `tools/launcher/launch.sh %s`.\n", a.Binary)
	default:
		fmt.Fprintf(&b, "Runs as a `%s` action: `main: %s`", a.Using, a.Main)
		if a.Post != "" {
			fmt.Fprintf(&b, ", `post: %s`", a.Post)
		}
		b.WriteString(" (each execs `tools/launcher/launch.sh` through `tools/launcher/node-shim.js`).\n")
	}
	b.WriteString("\n#### Inputs\n\n")
	if len(a.Inputs) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| Input | Required | Default | Environment variable | Description and validation |\n|---|---|---|---|---|\n")
		for _, in := range a.Inputs {
			req, def := "no", "—"
			if in.Required {
				req = "**yes**"
			}
			if in.Default != nil {
				def = "`" + cell(*in.Default) + "`"
				if *in.Default == "" {
					def = "*(empty)*"
				}
			}
			env := "—"
			if in.Env != "" {
				env = "`" + in.Env + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", in.Name, req, def, env, cell(in.Description))
		}
	}
	b.WriteString("\n#### Outputs\n\n")
	if len(a.Outputs) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| Output | Description and values |\n|---|---|\n")
		for _, o := range a.Outputs {
			fmt.Fprintf(&b, "| `%s` | %s |\n", o.Name, cell(o.Description))
		}
	}
	fmt.Fprintf(&b, "\n"+genEnd, a.Dir)
	return b.String()
}

// regenerateActionsDoc replaces every generated block of doc. It returns
// the new document, the actions without a block and the blocks naming no
// action.
func regenerateActionsDoc(doc string, actions []orderedAction) (string, []string, []string) {
	byDir := map[string]orderedAction{}
	for _, a := range actions {
		byDir[a.Dir] = a
	}
	seen := map[string]bool{}
	var stale []string
	var out strings.Builder
	rest := doc
	for {
		loc := genBeginRE.FindStringSubmatchIndex(rest)
		if loc == nil {
			out.WriteString(rest)
			break
		}
		dir := rest[loc[2]:loc[3]]
		end := fmt.Sprintf(genEnd, dir)
		endAt := strings.Index(rest[loc[0]:], end)
		if endAt < 0 {
			stale = append(stale, dir+" (no end marker)")
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:loc[0]])
		if a, ok := byDir[dir]; ok && !seen[dir] {
			out.WriteString(generatedBlock(a))
			seen[dir] = true
		} else {
			stale = append(stale, dir)
			out.WriteString(rest[loc[0] : loc[0]+endAt+len(end)])
		}
		rest = rest[loc[0]+endAt+len(end):]
	}
	var missing []string
	for _, a := range actions {
		if !seen[a.Dir] {
			missing = append(missing, a.Dir)
		}
	}
	return out.String(), missing, stale
}

// TestActionsReferenceIsCurrent keeps docs/actions.md in step with the
// action.yml files: every action has a section whose inputs and outputs
// tables are exactly what the action declares. Regenerate with
// UPDATE_GOLDEN=1; a new action gets a stub section whose prose must then
// be written by hand (the stub marker fails this test until it is).
func TestActionsReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot, actionsDoc)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	actions := loadOrderedActions(t)
	got, missing, stale := regenerateActionsDoc(doc, actions)
	update := os.Getenv(updateGoldenEnv) == "1"
	if update && len(missing) > 0 {
		for _, a := range actions {
			for _, m := range missing {
				if a.Dir == m {
					got = strings.TrimRight(got, "\n") + fmt.Sprintf("\n\n## `%s`\n\n%s\n\n%s\n\n### Exit codes\n\n%s\n", a.Dir, stubMarker, generatedBlock(a), stubMarker)
				}
			}
		}
		missing = nil
	}
	if update && got != doc {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", actionsDoc)
	}
	for _, m := range missing {
		t.Errorf("%s has no section for action %s; run %s=1 go test ./internal/actioncontract -run TestActionsReferenceIsCurrent and write its prose", actionsDoc, m, updateGoldenEnv)
	}
	for _, s := range stale {
		t.Errorf("%s has a generated block for %s, which is not an action under .github/actions (or is duplicated); remove that section by hand", actionsDoc, s)
	}
	if !update && got != doc {
		t.Errorf("%s is out of date with the action.yml files at line %d; run %s=1 go test ./internal/actioncontract -run TestActionsReferenceIsCurrent",
			actionsDoc, firstDiffLine(doc, got), updateGoldenEnv)
	}
	if strings.Contains(got, stubMarker) {
		t.Errorf("%s still has a stub section (%s): write the action's purpose and exit codes", actionsDoc, stubMarker)
	}
	// Every action section has its hand-written purpose and exit codes.
	for _, a := range actions {
		sec := section(got, "## `"+a.Dir+"`")
		if sec == "" {
			t.Errorf("%s: no heading ## `%s`", actionsDoc, a.Dir)
			continue
		}
		if !strings.Contains(sec, "### Exit codes") {
			t.Errorf("%s: section %s has no ### Exit codes", actionsDoc, a.Dir)
		}
		if !strings.Contains(sec, fmt.Sprintf(genEnd, a.Dir)) {
			t.Errorf("%s: the generated block of %s is not inside its section", actionsDoc, a.Dir)
		}
	}
}

// section returns the text from heading to the next level-2 heading.
func section(doc, heading string) string {
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+1+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

func TestRegenerateActionsDocFindsMissingAndStaleBlocks(t *testing.T) {
	t.Parallel()
	a := orderedAction{Dir: "x-action", Name: "X", Description: "Does x | y.", Using: "composite", Binary: "x",
		Inputs:  []docInput{{Name: "in", Description: "An\ninput.", Env: "INPUT_IN"}},
		Outputs: []docOutput{{Name: "out", Description: "An output <id>."}}}
	doc := "# T\n\n" + fmt.Sprintf(genBegin, "gone", "gone") + "\nold\n" + fmt.Sprintf(genEnd, "gone") + "\n"
	got, missing, stale := regenerateActionsDoc(doc, []orderedAction{a})
	if got != doc || len(missing) != 1 || missing[0] != "x-action" || len(stale) != 1 || stale[0] != "gone" {
		t.Fatalf("got %q missing %v stale %v", got, missing, stale)
	}
	doc = "# T\n\n" + fmt.Sprintf(genBegin, "x-action", "x-action") + "\nold\n" + fmt.Sprintf(genEnd, "x-action") + "\ntail\n"
	got, missing, stale = regenerateActionsDoc(doc, []orderedAction{a})
	if len(missing)+len(stale) != 0 || !strings.HasSuffix(got, "\ntail\n") || !strings.Contains(got, "| `in` | no | — | `INPUT_IN` | An input. |") ||
		!strings.Contains(got, `Does x \| y.`) || !strings.Contains(got, "| `out` | An output &lt;id&gt;. |") {
		t.Fatalf("regenerated:\n%s", got)
	}
}
