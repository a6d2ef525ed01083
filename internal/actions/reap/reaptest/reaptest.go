// Package reaptest builds an emulated GitHub for the reaper and operator
// recovery: a lock repository with a writer App installed on it alone, a
// reader App installed on the consumer repositories, seeded lock state and
// config, and the runner environment a workflow step would see. It is used
// by the tests of internal/actions/reap and internal/actions/recover and by
// in-process demos; it reads no real environment and opens no socket.
package reaptest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator/openapi"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Fixed identities of the world.
const (
	Owner        = "acme"
	OwnerID      = 7001
	LockRepo     = "build-lock"
	LockRepoID   = 7002
	Lock         = "seats"
	WriterAppID  = 501
	ReaderAppID  = 502
	APIURL       = "http://emulator.test/"
	ServerURL    = "https://github.com"
	StateBranch  = "lock-state"
	ConsumerRepo = "game"
)

var (
	keyOnce   sync.Once
	writerKey *rsa.PrivateKey
	readerKey *rsa.PrivateKey
	keyErr    error
)

func keys() (*rsa.PrivateKey, *rsa.PrivateKey, error) {
	keyOnce.Do(func() {
		if writerKey, keyErr = rsa.GenerateKey(rand.Reader, 2048); keyErr != nil {
			return
		}
		readerKey, keyErr = rsa.GenerateKey(rand.Reader, 2048)
	})
	return writerKey, readerKey, keyErr
}

func pemOf(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// World is one emulated organization.
type World struct {
	T  testing.TB
	Em *emulator.Emulator
	// API is the emulator's transport checked against GitHub's API
	// description (internal/emulator/openapi; the test fails on a
	// violation). Tests use it wherever they would use Em.Transport().
	API *openapi.Recorder
	// Env is the runner environment of the reaper/recover step; tests may
	// change it before a run.
	Env map[string]string
	// Stdout collects workflow commands.
	Stdout *SyncBuffer
	// OutputPath and SummaryPath are GITHUB_OUTPUT and GITHUB_STEP_SUMMARY.
	OutputPath, SummaryPath string
	// WriterKeyPEM and ReaderKeyPEM are the Apps' private keys, so tests can
	// assert that no output contains them.
	WriterKeyPEM, ReaderKeyPEM string

	idMu     sync.Mutex
	ids      int
	visible  []string
	consumer map[string]bool
}

// New builds a world whose emulator uses the real clock (the fake clock of
// a testing/synctest bubble when called inside one). config is the lock
// config JSON on the default branch ("" = none).
func New(t testing.TB, config string) *World {
	t.Helper()
	wk, rk, err := keys()
	if err != nil {
		t.Fatalf("generate App keys: %v", err)
	}
	em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: 1, ServerURL: ServerURL})
	em.AddOwner(Owner, OwnerID, true)
	em.AddRepo(Owner, LockRepo, LockRepoID, "main")
	em.AddRepo(Owner, ConsumerRepo, 0, "main")
	em.AddApp(WriterAppID, &wk.PublicKey)
	em.InstallApp(WriterAppID, Owner, []string{LockRepo})
	em.AddApp(ReaderAppID, &rk.PublicKey)
	if config != "" {
		if _, err := em.PutFile(Owner, LockRepo, "main", "locks/"+Lock+".config.json", []byte(config)); err != nil {
			t.Fatalf("seed config: %v", err)
		}
	}
	dir := t.TempDir()
	w := &World{
		T: t, Em: em, API: openapi.Attach(t, em.Transport()), Stdout: &SyncBuffer{},
		OutputPath:   filepath.Join(dir, "output"),
		SummaryPath:  filepath.Join(dir, "summary.md"),
		WriterKeyPEM: pemOf(wk), ReaderKeyPEM: pemOf(rk),
		consumer: map[string]bool{},
	}
	w.AddConsumer(ConsumerRepo, true)
	for _, p := range []string{w.OutputPath, w.SummaryPath} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	w.Env = map[string]string{
		"INPUT_LOCK_NAME":                   Lock,
		"INPUT_OPERATION":                   "reap",
		"BUILD_LOCK_ACTION_REPOSITORY":      Owner + "/" + LockRepo,
		"GITHUB_REPOSITORY":                 Owner + "/" + LockRepo,
		"GITHUB_REPOSITORY_ID":              strconv.Itoa(LockRepoID),
		"GITHUB_REPOSITORY_OWNER_ID":        strconv.Itoa(OwnerID),
		"GITHUB_API_URL":                    APIURL,
		"GITHUB_SERVER_URL":                 ServerURL,
		"GITHUB_OUTPUT":                     w.OutputPath,
		"GITHUB_STEP_SUMMARY":               w.SummaryPath,
		"BUILD_LOCK_APP_ID":                 strconv.Itoa(WriterAppID),
		"BUILD_LOCK_APP_PRIVATE_KEY":        w.WriterKeyPEM,
		"BUILD_LOCK_READER_APP_ID":          strconv.Itoa(ReaderAppID),
		"BUILD_LOCK_READER_APP_PRIVATE_KEY": w.ReaderKeyPEM,
	}
	return w
}

// AddConsumer creates consumer repository name in the organization; the
// reader App is installed on it when visible is true.
func (w *World) AddConsumer(name string, visible bool) {
	w.Em.AddRepo(Owner, name, 0, "main")
	if visible && !w.consumer[name] {
		w.consumer[name] = true
		w.visible = append(w.visible, name)
	}
	w.Em.InstallApp(ReaderAppID, Owner, append([]string(nil), w.visible...))
}

// Getenv reads the world's environment.
func (w *World) Getenv(k string) string { return w.Env[k] }

// StatePath is the state file's path in the lock repository.
func StatePath() string { return "locks/" + Lock + ".json" }

// SeedState writes s (encoded) on the state branch as a seed commit.
func (w *World) SeedState(s *lockstate.State) {
	w.T.Helper()
	data, err := lockstate.Encode(s)
	if err != nil {
		w.T.Fatalf("encode seed state: %v", err)
	}
	if _, ok := w.Em.BranchHead(Owner, LockRepo, StateBranch); !ok {
		if err := w.Em.CreateBranch(Owner, LockRepo, StateBranch, "main"); err != nil {
			w.T.Fatalf("create state branch: %v", err)
		}
	}
	if _, err := w.Em.PutFile(Owner, LockRepo, StateBranch, StatePath(), data); err != nil {
		w.T.Fatalf("seed state: %v", err)
	}
}

// State decodes the current state file.
func (w *World) State() *lockstate.State {
	w.T.Helper()
	h := w.History()
	if len(h) == 0 {
		w.T.Fatalf("no state file")
	}
	s, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: Lock, ServerURL: ServerURL})
	if err != nil {
		w.T.Fatalf("decode state: %v", err)
	}
	return s
}

// History is every committed version of the state file, oldest first.
func (w *World) History() []emulator.Version {
	return w.Em.History(Owner, LockRepo, StateBranch, StatePath())
}

// Messages are the commit messages of History.
func (w *World) Messages() []string {
	var out []string
	for _, v := range w.History() {
		out = append(out, v.Message)
	}
	return out
}

// Outputs parses GITHUB_OUTPUT (heredoc entries) into a map.
func (w *World) Outputs() map[string]string {
	w.T.Helper()
	data, err := os.ReadFile(w.OutputPath)
	if err != nil {
		w.T.Fatalf("read outputs: %v", err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// Summary returns the job summary written so far.
func (w *World) Summary() string {
	data, _ := os.ReadFile(w.SummaryPath)
	return string(data)
}

// NewID returns deterministic reservation ids res-1, res-2, ... per world.
func (w *World) NewID() string {
	w.idMu.Lock()
	defer w.idMu.Unlock()
	w.ids++
	return fmt.Sprintf("res-%d", w.ids)
}

// SyncBuffer collects a step's stdout; see actionio.SyncBuffer.
type SyncBuffer = actionio.SyncBuffer
