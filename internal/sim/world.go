package sim

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// Fixed identities of the simulated organization.
const (
	owner       = "acme"
	ownerID     = 7001
	lockRepo    = "build-lock"
	lockRepoID  = 7002
	lockName    = "seats"
	writerAppID = 601
	readerAppID = 602
	apiURL      = "https://api.github.com"
	serverURL   = "https://github.com"
	stateBranch = "lock-state"
	statePath   = "locks/" + lockName + ".json"
	configPath  = "locks/" + lockName + ".config.json"
	// consumerToken is the consumers' github-token (pull request checks and
	// job-id resolution). It looks like a real installation token on
	// purpose: the secret scan must never find it.
	consumerToken = "ghs_" + "simconsumertoken000000000000000000000" // token-shaped on purpose (leak checks), not one literal in the source
)

var consumers = []string{"game", "engine", "tools"}

var (
	keyOnce              sync.Once
	writerKey, readerKey *rsa.PrivateKey
	writerPEM, readerPEM string
)

// simKeyBits is the App keys' size. GitHub issues 2048-bit keys; the
// simulation uses 1024 (the smallest crypto/rsa accepts) because RS256
// signing of App JWTs was over a third of a seed's CPU at 2048, and the
// size changes nothing the emulator or the client decides. The unit tests
// of ghclient and the emulator, the demo and the e2e test keep 2048.
const simKeyBits = 1024

// keys generates the two App keys once per process (RSA generation is the
// only expensive setup; keys never influence a decision, so sharing them
// keeps seeds reproducible).
func keys() {
	keyOnce.Do(func() {
		gen := func() (*rsa.PrivateKey, string) {
			k, err := rsa.GenerateKey(rand.Reader, simKeyBits)
			if err != nil {
				panic(err)
			}
			return k, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
		}
		writerKey, writerPEM = gen()
		readerKey, readerPEM = gen()
	})
}

// tempRoot is where each simulated process gets its GITHUB_OUTPUT,
// GITHUB_STATE and GITHUB_STEP_SUMMARY directory: /dev/shm (tmpfs) where
// the machine has it, since thousands of seeds create and remove tens of
// thousands of these files and a disk-backed /tmp made their syscalls an
// eighth of a seed's CPU; the default temporary directory elsewhere.
var tempRoot = sync.OnceValue(func() string {
	const shm = "/dev/shm"
	if d, err := os.MkdirTemp(shm, "sim-probe-"); err == nil {
		_ = os.Remove(d)
		return shm
	}
	return ""
})

// skewClock is a runner's wall clock: the bubble's clock plus a fixed
// offset and a linear drift since start. Sleeps are real (virtual) time:
// only the reading of the clock is wrong, as on a runner with a bad NTP.
type skewClock struct {
	start  time.Time
	offset time.Duration
	drift  float64 // extra seconds per second
}

func (c skewClock) Now() time.Time {
	t := time.Now()
	return t.Add(c.offset + time.Duration(float64(t.Sub(c.start))*c.drift))
}

func (c skewClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.Real{}.Sleep(ctx, d)
}

// errKilled is what a SIGKILLed process's transport answers: nothing
// leaves a dead process.
var errKilled = errors.New("sim: process killed")

// tcpTimeout bounds one request like the kernel bounds a dead connection.
const tcpTimeout = 15 * time.Minute

// putRecord is one contents PUT of the state file as sent by an actor.
type putRecord struct {
	actor   string
	at      time.Time
	content []byte
}

// sendRecord is one request as sent by an actor, for the Retry-After audit.
type sendRecord struct {
	actor string
	proc  string  // the step (process) of the actor: acquire, release, post
	drift float64 // the process clock's rate error (skewClock.drift)
	cred  string  // hash of the Authorization header: one key per token; "jwt:<iss>" for App JWTs
	at    time.Time
	done  time.Time // when the answer (or the error) came back
	// sendSeq and doneSeq order events of one virtual instant (synctest
	// time stands still while nothing blocks).
	sendSeq, doneSeq int64
	reqID            string
	route            string
}

// recorder collects what every actor sent.
type recorder struct {
	seq   atomic.Int64
	mu    sync.Mutex
	puts  []putRecord
	sends []sendRecord
}

// actorTransport wraps the emulator transport for one process: it
// attributes every state write to the actor (by the PUT body), records
// every request with its token key and request id, and refuses everything
// once the process is killed.
type actorTransport struct {
	rec   *recorder
	actor string
	proc  string // the step; one job runs several processes
	drift float64
	dead  *atomic.Bool
	base  http.RoundTripper
}

func (t actorTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.dead != nil && t.dead.Load() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errKilled
	}
	now := time.Now()
	sendSeq := t.rec.seq.Add(1)
	if req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/contents/"+statePath) && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		var put struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(body, &put) == nil {
			if data, err := base64.StdEncoding.DecodeString(put.Content); err == nil {
				t.rec.mu.Lock()
				t.rec.puts = append(t.rec.puts, putRecord{actor: t.actor, at: now, content: data})
				t.rec.mu.Unlock()
			}
		}
	}
	cred := credKey(req.Header.Get("Authorization"))
	// A stalled connection ends at the OS TCP timeout at the latest
	// (modelled as 15 minutes): ghclient sets no per-attempt deadline on
	// attempt-bounded calls, so without this a Stall fault hangs a process
	// forever (reported as a gap in docs/simulation.md).
	ctx, cancel := context.WithTimeout(req.Context(), tcpTimeout)
	defer cancel()
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	sr := sendRecord{actor: t.actor, proc: t.proc, drift: t.drift, cred: cred, at: now, done: time.Now(), sendSeq: sendSeq, doneSeq: t.rec.seq.Add(1), route: req.Method + " " + req.URL.Path}
	if resp != nil {
		sr.reqID = resp.Header.Get("X-GitHub-Request-Id")
	}
	t.rec.mu.Lock()
	t.rec.sends = append(t.rec.sends, sr)
	t.rec.mu.Unlock()
	return resp, err
}

// syncBuffer collects a step's stdout; see actionio.SyncBuffer.
type syncBuffer = actionio.SyncBuffer

// credKey is the Retry-After audit's key for an Authorization header. A
// token is its own key. An App JWT is re-signed every second (iat), so a
// client that re-mints its JWT would escape a per-string key: JWT calls are
// keyed by the App (the iss claim), whose rate limit GitHub applies.
func credKey(auth string) string {
	if auth == "" {
		return ""
	}
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && strings.HasPrefix(tok, "eyJ") {
		parts := strings.Split(tok, ".")
		if len(parts) == 3 {
			if payload, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
				var claims struct {
					Iss json.RawMessage `json:"iss"`
				}
				if json.Unmarshal(payload, &claims) == nil && len(claims.Iss) > 0 {
					return "jwt:" + string(claims.Iss)
				}
			}
		}
	}
	sum := sha256.Sum256([]byte(auth))
	return hex.EncodeToString(sum[:6])
}
