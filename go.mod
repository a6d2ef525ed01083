module github.com/Ambiguous-Interactive/ambiguous-organization-build-lock

go 1.26

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/bradleyfalzon/ghinstallation/v2 v2.12.0
	github.com/getkin/kin-openapi v0.152.0
	github.com/gofrs/flock v0.13.0
	github.com/golang-jwt/jwt/v4 v4.5.1
	github.com/google/go-github/v66 v66.0.0
	github.com/google/uuid v1.6.0
	github.com/rhysd/actionlint v1.7.12
	github.com/sassoftware/relic/v8 v8.2.0
	github.com/sethvargo/go-githubactions v1.3.2
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v4 v4.0.0-rc.3
	golang.org/x/sys v0.42.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/bmatcuk/doublestar/v4 v4.10.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.21 // indirect
	github.com/mattn/go-shellwords v1.0.12 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/spf13/cobra v1.8.1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/term v0.41.0 // indirect
	golang.org/x/text v0.21.0 // indirect
)
