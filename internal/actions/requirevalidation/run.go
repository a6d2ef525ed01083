package requirevalidation

import (
	"context"
	"errors"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// OutputValidationSafe is the action's one output.
const OutputValidationSafe = "validation-safe"

// UnsafeError is an unsafe verdict.
type UnsafeError struct{ Verdict validation.Verdict }

// Error implements error with the verdict's message.
func (e *UnsafeError) Error() string { return e.Verdict.Message() }

// ReasonCode returns the verdict's reason (the first rule broken).
func (e *UnsafeError) ReasonCode() string { return e.Verdict.Reason }

// Run is the require-unity-validation action: LoadSettings, then Execute.
func Run(ctx context.Context, deps Deps) error {
	s, err := LoadSettings(deps.Getenv)
	if err != nil {
		return err
	}
	return Execute(ctx, s, deps)
}

// Execute is the action's core over settled settings: validation-safe=false
// first, then the verdict, the summary and (safe only) validation-safe=true.
func Execute(_ context.Context, s Settings, deps Deps) error {
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	if err := a.SetOutput(OutputValidationSafe, "false"); err != nil {
		return err
	}
	in := s.Inputs
	v := validation.EvaluateValidation(in)
	summary(a, in, v)
	if !v.Safe {
		return &UnsafeError{Verdict: v}
	}
	a.Notice(v.Message())
	return a.SetOutput(OutputValidationSafe, "true")
}

// summary writes the inputs and the verdict as one table.
func summary(a *actionio.IO, in validation.Inputs, v validation.Verdict) {
	rows := make([]actionkit.Row, 0, len(validation.InputNames)+2)
	title := "Unity validation: safe (" + v.Matrix.Description() + ")"
	if !v.Safe {
		title = "Unity validation: unsafe (" + v.Reason + ")"
	}
	for _, name := range validation.InputNames {
		val := markdown.Code(trim(in.Get(name)))
		if !v.Safe && name == v.Broken {
			val += " ← breaks " + markdown.Text(v.Matrix.Description()) + " (" + markdown.Text(v.Want) + ")"
		}
		rows = append(rows, actionkit.Row{Field: name, Value: val})
	}
	rows = append(rows, actionkit.Row{Field: "Verdict", Value: markdown.Message(v.Message())})
	if err := a.Summary(actionkit.Table(title, rows)); err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		a.Warning(fmt.Sprintf("Could not write the job summary: %v", err))
	}
}

// trim bounds a job result for the summary.
func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
