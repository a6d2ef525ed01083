package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

var emulatorLockName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// runEmulator implements `buildlock emulator`: it starts a GitHub REST
// emulator seeded with one organization, one lock repository and one GitHub
// App installed on the organization, writes the App's private key to a file
// (mode 0600), prints one JSON line describing the endpoint, and serves until
// ctx is cancelled. The REST API is served at the root of api_url (a
// go-github client needs api_url + "/" as its BaseURL); the admin API is at
// admin_url. The private key itself is never printed.
func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("buildlock emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	owner := fs.String("owner", "example-org", "organization that owns the lock repository")
	ownerID := fs.Int64("owner-id", 1001, "organization id")
	repoName := fs.String("repo", "build-lock", "lock repository name")
	repoID := fs.Int64("repo-id", 2001, "lock repository id")
	appID := fs.Int64("app-id", 3001, "GitHub App id")
	keyDir := fs.String("key-dir", "", "directory for the App private key (default: a new temporary directory)")
	lock := fs.String("lock", "", "optional lock name: also commit locks/<lock>.config.json on the default branch")
	maxHolders := fs.Int("max-holders", 1, "maxHolders for --lock")
	serverURL := fs.String("server-url", "", "web origin used in html_url fields (default: derived from the request)")
	secondary := fs.Bool("secondary-limits", false, "enforce GitHub's secondary rate limits (100 concurrent, 900 points/min per endpoint, 80 content writes/min and 500/h per identity)")
	replicaLag := fs.Duration("replica-lag", 0, "GitHub's replica lag: a contents read may return any version written this long ago (realistic: 10s; 0 = reads always fresh)")
	lagFraction := fs.Float64("replica-lag-fraction", emulator.DefaultReplicaLagFraction, "share of reads a lagging replica serves, with --replica-lag")
	commitLatency := fs.Duration("commit-latency", 0, "how long a contents write takes to commit; concurrent writes to one branch then fail with 409 \"is at X but expected Y\" (realistic: 250ms; 0 = off)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *replicaLag < 0 || *commitLatency < 0 || *lagFraction < 0 || *lagFraction > 1 {
		return errors.New("emulator: --replica-lag and --commit-latency must not be negative, --replica-lag-fraction must be within [0, 1]")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("emulator: unexpected arguments %q", fs.Args())
	}
	if *lock != "" && !emulatorLockName.MatchString(*lock) {
		return fmt.Errorf("emulator: --lock %q must match %s", *lock, emulatorLockName)
	}
	if *maxHolders < 1 || *maxHolders > 64 {
		return errors.New("emulator: --max-holders must be between 1 and 64")
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("emulator: generate key: %w", err)
	}
	dir := *keyDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "buildlock-emulator-"); err != nil {
			return fmt.Errorf("emulator: key dir: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("emulator: key dir: %w", err)
	}
	keyPath := filepath.Join(dir, fmt.Sprintf("app-%d.private-key.pem", *appID))
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyPath, pemBytes, 0o600); err != nil {
		return fmt.Errorf("emulator: write key: %w", err)
	}

	opts := emulator.Options{ServerURL: *serverURL, ReplicaLag: *replicaLag, ReplicaLagFraction: *lagFraction, CommitLatency: *commitLatency}
	if *secondary {
		opts.SecondaryLimits = emulator.GitHubSecondaryLimits()
	}
	emu := emulator.New(opts)
	emu.AddOwner(*owner, *ownerID, true)
	emu.AddRepo(*owner, *repoName, *repoID, "main")
	emu.AddApp(*appID, &key.PublicKey)
	instID := emu.InstallApp(*appID, *owner, nil)
	if *lock != "" {
		cfg, _ := json.MarshalIndent(map[string]any{"maxHolders": *maxHolders}, "", "  ")
		if _, err := emu.PutFile(*owner, *repoName, "main", "locks/"+*lock+".config.json", append(cfg, '\n')); err != nil {
			return err
		}
	}

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("emulator: listen: %w", err)
	}
	origin := "http://" + l.Addr().String()
	web := *serverURL
	if web == "" {
		web = origin
	}
	info := map[string]any{
		"api_url": origin, "server_url": web, "owner": *owner, "owner_id": *ownerID,
		"repository": *owner + "/" + *repoName, "repository_name": *repoName, "repository_id": *repoID, "app_id": *appID,
		"installation_id": instID, "private_key_path": keyPath, "admin_url": origin + "/_emulator",
	}
	line, _ := json.Marshal(info)
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		_ = l.Close()
		return err
	}
	return emu.Serve(ctx, l)
}
