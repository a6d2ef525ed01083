// Command manifest writes .github/dist/manifest.json, the file a pinned commit
// uses to decide which release binaries tools/launcher/launch.sh may run
// (docs/packaging.md).
//
// Usage:
//
//	go run ./tools/manifest -dist dist -version v1.2.3 -tag v1.2.3 \
//	    -repo owner/name -source-digest <hex> -out .github/dist/manifest.json
//	go run ./tools/manifest -check .github/dist/manifest.json
//	go run ./tools/manifest -list-cmds        # the commands a release ships
//
// A manifest with assets must be complete: every command of
// internal/releaseset (every cmd/ of the module at -root) on each of the six
// targets. -dist refuses to write one that is not, and -check to pass it.
//
// The output is canonical (fixed key order, one asset per line) because the
// launcher reads it with bash regular expressions, without jq or python.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/releaseset"
)

// Manifest is the decoded form of .github/dist/manifest.json.
type Manifest struct {
	Version      string           `json:"version"`
	Tag          string           `json:"tag"`
	SourceDigest string           `json:"source_digest"`
	Assets       map[string]Asset `json:"assets"`
}

// Asset is one release binary: its SHA-256 and download URL.
type Asset struct {
	SHA256 string `json:"sha256"`
	URL    string `json:"url"`
}

// assetName matches dist file names <binary>_<os>_<arch>[.exe].
var assetName = regexp.MustCompile(`^([a-z][a-z0-9-]*_(?:linux|darwin|windows)_(?:amd64|arm64))(\.exe)?$`)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "manifest:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "directory holding the release binaries")
	version := fs.String("version", "", "release version, e.g. v1.2.3")
	tag := fs.String("tag", "", "release tag (defaults to -version)")
	repo := fs.String("repo", "", "owner/name hosting the release")
	digest := fs.String("source-digest", "", "output of tools/launcher/source-digest.sh")
	out := fs.String("out", "", "file to write (default stdout)")
	check := fs.String("check", "", "only verify that this manifest file is valid, canonical and complete")
	root := fs.String("root", ".", "module root whose cmd/ decides the commands a release ships")
	listCmds := fs.Bool("list-cmds", false, "print the commands a release ships, one per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmds, err := releaseset.Commands(*root)
	if err != nil {
		return err
	}
	if *listCmds {
		_, err := fmt.Fprintln(stdout, strings.Join(cmds, "\n"))
		return err
	}
	if *check != "" {
		b, err := os.ReadFile(*check)
		if err != nil {
			return err
		}
		if err := Check(b); err != nil {
			return err
		}
		return CheckComplete(b, cmds)
	}
	if *tag == "" {
		*tag = *version
	}
	m, err := FromDist(*dist, *version, *tag, *repo, *digest)
	if err != nil {
		return err
	}
	if missing := releaseset.Missing(cmds, func(k string) bool { _, ok := m.Assets[k]; return ok }); len(missing) > 0 {
		return fmt.Errorf("%s lacks release binaries %v (run make dist)", *dist, missing)
	}
	b := Render(m)
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// FromDist builds a manifest from the binaries in dir.
func FromDist(dir, version, tag, repo, digest string) (Manifest, error) {
	if version == "" || repo == "" || !hex64.MatchString(digest) {
		return Manifest{}, errors.New("-version, -repo and a 64-hex -source-digest are required")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Version: version, Tag: tag, SourceDigest: digest, Assets: map[string]Asset{}}
	for _, e := range entries {
		sub := assetName.FindStringSubmatch(e.Name())
		if sub == nil || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return Manifest{}, err
		}
		sum := sha256.Sum256(b)
		m.Assets[sub[1]] = Asset{
			SHA256: hex.EncodeToString(sum[:]),
			URL:    fmt.Sprintf("https://github.com/%s/releases/download/%s/%s", repo, tag, e.Name()),
		}
	}
	if len(m.Assets) == 0 {
		return Manifest{}, fmt.Errorf("no release binaries in %s", dir)
	}
	return m, nil
}

func js(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// Render returns the canonical encoding: keys in fixed order, assets sorted,
// one asset per line, trailing newline.
func Render(m Manifest) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %s,\n  \"tag\": %s,\n  \"source_digest\": %s,\n", js(m.Version), js(m.Tag), js(m.SourceDigest))
	keys := make([]string, 0, len(m.Assets))
	for k := range m.Assets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		b.WriteString("  \"assets\": {}\n}\n")
		return b.Bytes()
	}
	b.WriteString("  \"assets\": {\n")
	for i, k := range keys {
		a := m.Assets[k]
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %s: {\"sha256\": %s, \"url\": %s}%s\n", js(k), js(a.SHA256), js(a.URL), sep)
	}
	b.WriteString("  }\n}\n")
	return b.Bytes()
}

// CheckComplete verifies that a manifest with assets lists every command of
// cmds on every release target (an empty manifest, as on main, passes).
func CheckComplete(b []byte, cmds []string) error {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("decode manifest: %w", err)
	}
	if len(m.Assets) == 0 {
		return nil
	}
	if missing := releaseset.Missing(cmds, func(k string) bool { _, ok := m.Assets[k]; return ok }); len(missing) > 0 {
		return fmt.Errorf("manifest %s is incomplete: no assets %v", m.Tag, missing)
	}
	return nil
}

// Check verifies that b is a valid manifest in canonical form: every asset
// key is <binary>_<os>_<arch>, every sha256 is 64 lowercase hex, every URL is
// https, and a manifest with assets names its source digest.
func Check(b []byte) error {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("decode manifest: %w", err)
	}
	if m.Assets == nil {
		return errors.New("manifest has no assets object")
	}
	for k, a := range m.Assets {
		if sub := assetName.FindStringSubmatch(k); sub == nil || sub[2] != "" {
			return fmt.Errorf("asset key %q is not <binary>_<os>_<arch>", k)
		}
		if !hex64.MatchString(a.SHA256) {
			return fmt.Errorf("asset %q: sha256 is not 64 lowercase hex", k)
		}
		if !strings.HasPrefix(a.URL, "https://") || strings.ContainsAny(a.URL, "\"\\ ") {
			return fmt.Errorf("asset %q: url must be a plain https URL", k)
		}
	}
	if len(m.Assets) > 0 && !hex64.MatchString(m.SourceDigest) {
		return errors.New("a manifest with assets needs a 64-hex source_digest")
	}
	if !bytes.Equal(Render(m), b) {
		return errors.New("manifest is not in canonical form; regenerate it with go run ./tools/manifest")
	}
	return nil
}
