// Command selftest runs CI's self-test of the actions on a real runner
// (docs/packaging.md "Self-test"): the job checks this repository out, then
//
//	go run ./tools/selftest start   # the GitHub emulator, in the background
//	uses: ./.github/actions/<name>  # every action, through the real runner
//	go run ./tools/selftest check   # what the actions did
//
// start builds cmd/buildlock, starts `buildlock emulator` detached (its
// output in files, so the step ends while it keeps serving), seeded with
// this job's own owner and repository identity (GITHUB_REPOSITORY_OWNER,
// GITHUB_REPOSITORY, their ids) and the lock "selftest", and writes to
// GITHUB_ENV the emulator's loopback API URL (BUILD_LOCK_SELFTEST_API_URL,
// honored only by local actions) and its throwaway App credentials as both
// the writer and the reader App. check compares the step results the
// workflow passes in SELFTEST_* variables with what the actions must have
// done, and reads the emulator's history of the lock state. The emulator
// outlives the steps: the runner ends it with the job, after the post step
// of acquire-build-lock-with-cleanup has run against it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Lock is the lock the self-test uses.
const Lock = "selftest"

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "selftest:", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: selftest start|check")
	}
	switch args[0] {
	case "start":
		return start(getenv, stdout)
	case "check":
		return check(getenv, stdout, http.DefaultClient)
	}
	return fmt.Errorf("unknown command %q (start|check)", args[0])
}

// info is the emulator's one JSON line (cmd/buildlock emulator.go).
type info struct {
	APIURL         string `json:"api_url"`
	AdminURL       string `json:"admin_url"`
	Owner          string `json:"owner"`
	RepositoryName string `json:"repository_name"`
	AppID          int64  `json:"app_id"`
	PrivateKeyPath string `json:"private_key_path"`
}

func start(getenv func(string) string, stdout io.Writer) error {
	temp := getenv("RUNNER_TEMP")
	envFile := getenv("GITHUB_ENV")
	repo := getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if temp == "" || envFile == "" || !ok {
		return errors.New("RUNNER_TEMP, GITHUB_ENV and GITHUB_REPOSITORY must be set (run inside a workflow job)")
	}
	dir := filepath.Join(temp, "selftest-emulator")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	bin := filepath.Join(dir, "buildlock")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/buildlock")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/buildlock: %w", err)
	}
	outPath := filepath.Join(dir, "emulator.out")
	out, err := os.Create(outPath)
	if err != nil {
		return err
	}
	errFile, err := os.Create(filepath.Join(dir, "emulator.err"))
	if err != nil {
		return err
	}
	server := getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	cmd := exec.Command(bin, "emulator", "--listen", "127.0.0.1:0",
		"--owner", owner, "--owner-id", orDefault(getenv("GITHUB_REPOSITORY_OWNER_ID"), "1001"),
		"--repo", name, "--repo-id", orDefault(getenv("GITHUB_REPOSITORY_ID"), "2001"),
		"--lock", Lock, "--max-holders", "1", "--key-dir", dir, "--server-url", server)
	cmd.Stdout, cmd.Stderr = out, errFile // never the step's pipes: the step must end while it serves
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the emulator: %w", err)
	}
	_ = out.Close()
	_ = errFile.Close()
	var in info
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(outPath)
		if line, _, found := bytes.Cut(b, []byte("\n")); found {
			if err := json.Unmarshal(line, &in); err != nil {
				return fmt.Errorf("emulator said %q: %w", line, err)
			}
			break
		}
		if time.Now().After(deadline) {
			msg, _ := os.ReadFile(filepath.Join(dir, "emulator.err"))
			return fmt.Errorf("the emulator did not start within 60 s: %s", msg)
		}
		time.Sleep(100 * time.Millisecond) // a tool's bounded wait for a child, not a test
	}
	key, err := os.ReadFile(in.PrivateKeyPath)
	if err != nil {
		return err
	}
	if err := seed(getenv, in, owner, name); err != nil {
		return err
	}
	var env strings.Builder
	for k, v := range map[string]string{
		"BUILD_LOCK_SELFTEST_API_URL":      in.APIURL,
		"BUILD_LOCK_SELFTEST_ADMIN_URL":    in.AdminURL,
		"BUILD_LOCK_APP_ID":                fmt.Sprint(in.AppID),
		"BUILD_LOCK_READER_APP_ID":         fmt.Sprint(in.AppID),
		"BUILD_LOCK_SELFTEST_GITHUB_TOKEN": selftestToken,
	} {
		fmt.Fprintf(&env, "%s=%s\n", k, v)
	}
	// Multi-line values use the documented delimiter form
	// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#multiline-strings).
	for _, k := range []string{"BUILD_LOCK_APP_PRIVATE_KEY", "BUILD_LOCK_READER_APP_PRIVATE_KEY"} {
		fmt.Fprintf(&env, "%s<<SELFTEST_EOF\n%s\nSELFTEST_EOF\n", k, strings.TrimSpace(string(key)))
	}
	f, err := os.OpenFile(envFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(env.String()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "selftest: emulator for %s serving at %s (pid %d)\n", repo, in.APIURL, cmd.Process.Pid)
	return err
}

// selftestToken is the job token the emulator knows, standing in for the
// job's GITHUB_TOKEN (which the emulator cannot know): pull requests and
// actions read on the repository.
const selftestToken = "ghs_" + "selftest0000000000000000000000000000" // a fake, split so no token-like literal sits in the source

// seed registers the job token and, for a pull_request run, the pull
// request at its head commit (from GITHUB_EVENT_PATH), so
// require-current-pr-head checks a real head against the emulator.
func seed(getenv func(string) string, in info, owner, name string) error {
	post := func(path string, body any) error {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		resp, err := http.Post(in.AdminURL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			msg, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("emulator admin %s: %s: %s", path, resp.Status, msg)
		}
		return nil
	}
	if err := post("/tokens", map[string]any{"token": selftestToken, "label": "selftest-github-token",
		"repos": []string{owner + "/" + name}, "permissions": map[string]string{"pull_requests": "read", "actions": "read", "contents": "read"}}); err != nil {
		return err
	}
	if getenv("GITHUB_EVENT_NAME") != "pull_request" {
		return nil
	}
	raw, err := os.ReadFile(getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return fmt.Errorf("read the pull_request event: %w", err)
	}
	var ev struct {
		PullRequest struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("decode the pull_request event: %w", err)
	}
	return post("/pulls", map[string]any{"owner": owner, "repo": name, "number": ev.PullRequest.Number, "state": "open", "head_sha": ev.PullRequest.Head.SHA})
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// Expectations are the SELFTEST_* step results check requires: the
// variable, then the value it must have ("" means: any non-empty value).
var Expectations = [][2]string{
	{"SELFTEST_PRHEAD_IS_CURRENT", "true"},
	{"SELFTEST_ACQUIRE_ACQUIRED", "true"},
	{"SELFTEST_ACQUIRE_ADMISSION_RESULT", "acquired"},
	{"SELFTEST_ACQUIRE_FENCING", ""},
	{"SELFTEST_RELEASE_RELEASED", "true"},
	{"SELFTEST_REAP_OUTCOME", "success"},
	// recover of a reservation that does not exist must be refused.
	{"SELFTEST_RECOVER_OUTCOME", "failure"},
	{"SELFTEST_CLEANUP_ACQUIRED", "true"},
	{"SELFTEST_CLASSIFY_UNITY_REQUIRED", "true"},
	{"SELFTEST_VALIDATION_SAFE", "true"},
	// validate-unity-license must refuse a step without the secrets.
	{"SELFTEST_LICENSE_OUTCOME", "failure"},
	{"SELFTEST_LICENSE_SERIAL_PRESENT", "false"},
	{"SELFTEST_CLEANUP_GATE_SAFE", "true"},
}

func check(getenv func(string) string, stdout io.Writer, client *http.Client) error {
	var problems []string
	for _, e := range Expectations {
		got := getenv(e[0])
		if (e[1] == "" && got == "") || (e[1] != "" && got != e[1]) {
			want := e[1]
			if want == "" {
				want = "a value"
			}
			problems = append(problems, fmt.Sprintf("%s is %q, want %s", e[0], got, want))
		}
	}
	admin := getenv("BUILD_LOCK_SELFTEST_ADMIN_URL")
	repo := getenv("GITHUB_REPOSITORY")
	owner, name, _ := strings.Cut(repo, "/")
	q := url.Values{"owner": {owner}, "repo": {name}, "branch": {"lock-state"}, "path": {"locks/" + Lock + ".json"}}
	resp, err := client.Get(admin + "/history?" + q.Encode())
	if err != nil {
		return fmt.Errorf("read the emulator's history: %w", err)
	}
	defer resp.Body.Close()
	var versions []struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&versions); err != nil {
		return fmt.Errorf("decode the emulator's history: %w", err)
	}
	// acquire, release and the second acquire each commit at least once.
	if len(versions) < 3 {
		problems = append(problems, fmt.Sprintf("the lock state has %d committed versions, want at least 3 (acquire, release, acquire)", len(versions)))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the actions did not do what they must:\n  %s", strings.Join(problems, "\n  "))
	}
	_, err = fmt.Fprintf(stdout, "selftest: every action ran on %s/%s; %d state versions committed\n", runtime.GOOS, runtime.GOARCH, len(versions))
	return err
}
