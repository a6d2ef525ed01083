package lockstate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// describeLock renders the document's lock value for an error message.
func describeLock(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if v == nil {
		return "no lock"
	}
	return "a non-string lock"
}

// decodeSchemaVersion implements rule 3; an absent key means schema 1.
func decodeSchemaVersion(obj map[string]any, lock string) (int, error) {
	v, ok := obj["schemaVersion"]
	if !ok {
		return 1, nil
	}
	unsupported := newError(CodeUnsupportedSchema, fmt.Sprintf(
		"decode lock state %q: state file schema %s is unsupported; expected an integer from 1 through %d",
		lock, describeSchema(v), MaxSchemaVersion))
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, unsupported
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || f < 1 {
		return 0, unsupported
	}
	if f > MaxSchemaVersion {
		return 0, newError(CodeNewerSchema, fmt.Sprintf(
			"decode lock state %q: state file schema %s is newer than supported schema %d; upgrade this build lock client to a release that supports it",
			lock, jsNumberString(string(n)), MaxSchemaVersion))
	}
	return int(f), nil
}

func describeSchema(v any) string {
	switch x := v.(type) {
	case json.Number:
		return jsNumberString(string(x))
	case string:
		return strconv.Quote(x)
	case nil:
		return "null"
	default:
		return "of a non-numeric type"
	}
}
