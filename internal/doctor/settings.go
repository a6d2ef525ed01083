package doctor

import (
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// AppSettings are one App's credentials as the doctor found them. A
// missing or malformed credential is not a refusal but a finding: Problem
// says why the App's checks fail, never the value.
type AppSettings struct {
	// IDVar and KeyVar name the variables read.
	IDVar, KeyVar string
	// AppID and PrivateKey are valid when Problem is "".
	AppID      int64
	PrivateKey []byte
	// Problem is why no client can be built ("" when the two are usable).
	Problem string
}

// Settings are everything the doctor reads from its environment, read once
// by LoadSettings before any request: the writer and reader App
// credentials and GITHUB_API_URL (empty: the public API).
type Settings struct {
	APIURL string
	Writer AppSettings
	Reader AppSettings
}

// LoadSettings reads the credentials and the API URL through getenv.
func LoadSettings(getenv func(string) string) Settings {
	return Settings{
		APIURL: getenv("GITHUB_API_URL"),
		Writer: parseApp(getenv, lockaction.EnvAppID, lockaction.EnvAppPrivateKey),
		Reader: parseApp(getenv, lockaction.EnvReaderAppID, lockaction.EnvReaderAppKey),
	}
}

func parseApp(getenv func(string) string, idVar, keyVar string) AppSettings {
	s := AppSettings{IDVar: idVar, KeyVar: keyVar}
	rawID, key := strings.TrimSpace(getenv(idVar)), getenv(keyVar)
	if rawID == "" || strings.TrimSpace(key) == "" {
		s.Problem = idVar + " and " + keyVar + " are not set"
		return s
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil || id <= 0 {
		s.Problem = idVar + " is not a positive App id"
		return s
	}
	s.AppID, s.PrivateKey = id, []byte(key)
	return s
}
