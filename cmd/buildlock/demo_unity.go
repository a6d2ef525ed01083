package main

import (
	"context"
	"errors"
	"io"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/demo"
)

// runUnityDemo is `buildlock demo --unity`: the hosted half of the Unity
// lifecycle on the embedded emulator (internal/demo.RunUnity).
func runUnityDemo(ctx context.Context, asJSON bool, stdout io.Writer) error {
	sum, err := demo.RunUnity(ctx, stdout, asJSON)
	if sum != nil && asJSON {
		if jerr := demo.RenderUnityJSON(stdout, sum); jerr != nil {
			return jerr
		}
	}
	if err != nil {
		return err
	}
	if !sum.OK() {
		return errors.New("the Unity demo did not tell the expected story (see above)")
	}
	return nil
}
