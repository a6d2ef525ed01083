package actioncontract

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v4"
)

// Metadata is the subset of an action.yml the contract checks.
type Metadata struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Inputs      map[string]Input  `yaml:"inputs"`
	Outputs     map[string]Output `yaml:"outputs"`
	Runs        Runs              `yaml:"runs"`
}

// Input is one declared action input.
type Input struct {
	Description string  `yaml:"description"`
	Required    *bool   `yaml:"required"`
	Default     *string `yaml:"default"`
}

// Output is one declared action output; Value is set for composite actions.
type Output struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

// Runs is the runs: block.
type Runs struct {
	Using string `yaml:"using"`
	Main  string `yaml:"main"`
	Pre   string `yaml:"pre"`
	Post  string `yaml:"post"`
	Steps []Step `yaml:"steps"`
}

// Step is one composite step.
type Step struct {
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	Env   map[string]string `yaml:"env"`
}

// LoadActions parses every <root>/.github/actions/*/action.yml and returns
// them keyed by action directory name.
func LoadActions(root string) (map[string]Metadata, error) {
	paths, err := filepath.Glob(filepath.Join(root, ".github", "actions", "*", "action.yml"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]Metadata, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var m Metadata
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("parse %s: %w", p, err)
		}
		out[filepath.Base(filepath.Dir(p))] = m
	}
	return out, nil
}

// StepFor returns the composite step a runner on goos ("windows", "linux",
// "darwin") executes: the Windows step on Windows, the POSIX step elsewhere
// (see [RenderCompositeRuns]).
func (m Metadata) StepFor(goos string) (Step, bool) {
	id, cond := PosixStepID, PosixCondition
	if goos == "windows" {
		id, cond = WindowsStepID, WindowsCondition
	}
	for _, s := range m.Runs.Steps {
		if s.ID == id && s.If == cond {
			return s, true
		}
	}
	return Step{}, false
}
