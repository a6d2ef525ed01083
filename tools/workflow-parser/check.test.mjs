// node --test: what the workflow-parser check refuses and what it loads.
// Run by make workflow-parser after check.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { checkAction, checkWorkflow, collect, readmeWorkflow, readmeBegin, readmeEnd } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const testdata = (name) => path.join(here, "testdata", name);

// The acquire action.yml as it was before commit e27ce35: the runner-id
// input's description said "e.g. ${{ runner.name }}", and GitHub refused to
// load the whole action at "Set up job".
const oldAcquire = "acquire-build-lock-before-e27ce35.action.yml";

function run(...args) {
  return spawnSync(process.execPath, [path.join(here, "check.mjs"), ...args], { cwd: here, encoding: "utf8" });
}

test("the acquire action.yml from before e27ce35 is refused with the runner's message", () => {
  const errors = checkAction(oldAcquire, fs.readFileSync(testdata(oldAcquire), "utf8"));
  assert.deepEqual(errors, [`${oldAcquire} (Line: 14, Col: 18): Unrecognized named-value: 'runner'`]);
});

test("the command exits 1 and names the file and message for the old acquire action", () => {
  const r = run("--action", path.join("testdata", oldAcquire));
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /acquire-build-lock-before-e27ce35\.action\.yml \(Line: 14, Col: 18\): Unrecognized named-value: 'runner'/);
  assert.match(r.stdout, /1 action\(s\), 0 workflow\(s\) checked with @actions\/workflow-parser, 1 error\(s\)/);
});

test("every action.yml of the repository loads", () => {
  const { actions } = collect(root);
  assert.ok(actions.length >= 6, `found ${actions.length} actions`);
  for (const a of actions) assert.deepEqual(checkAction(a.name, a.content), [], a.name);
});

test("parseWorkflow errors are reported: the steps context in a job-level if", async () => {
  const name = "step-context-in-job-if.workflow.yml";
  const errors = await checkWorkflow(name, fs.readFileSync(testdata(name), "utf8"));
  assert.deepEqual(errors, [`${name} (Line: 9, Col: 9): Unrecognized named-value: 'steps'`]);
});

test("convertWorkflowTemplate errors are reported: needs of an unknown job", async () => {
  const name = "needs-missing-job.workflow.yml";
  const errors = await checkWorkflow(name, fs.readFileSync(testdata(name), "utf8"));
  assert.deepEqual(errors, [`${name} (Line: 12, Col: 20): Job 'gate' depends on unknown job 'licensed'.`]);
});

test("the README's consumer workflow keeps README line numbers", async () => {
  const readme = [
    "# title", // 1
    "", // 2
    readmeBegin, // 3
    "```yaml", // 4
    "on: push", // 5
    "jobs:", // 6
    "  a:", // 7
    "    runs-on: ubuntu-latest", // 8
    "    if: ${{ steps.x.outputs.y }}", // 9
    "    steps:", // 10
    "      - run: echo", // 11
    "```", // 12
    readmeEnd, // 13
    "",
  ].join("\n");
  const block = readmeWorkflow(readme);
  assert.notEqual(block, undefined);
  assert.deepEqual(await checkWorkflow("README.md", block), ["README.md (Line: 9, Col: 9): Unrecognized named-value: 'steps'"]);
  assert.equal(readmeWorkflow("no markers"), undefined);
  assert.equal(readmeWorkflow(`${readmeBegin}\non: push\n${readmeEnd}\n`), undefined, "no yaml fence");
});

test("new actions, workflows and examples are picked up without a list", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workflow-parser-"));
  try {
    const write = (rel, text) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    write(".github/actions/new-action/action.yml", "name: n\n");
    write(".github/actions/other/action.yaml", "name: o\n");
    write(".github/actions/not-an-action/README.md", "x\n");
    write(".github/workflows/new.yml", "on: push\n");
    write(".github/workflows/new2.yaml", "on: push\n");
    write("docs/examples/new-example.yml", "on: push\n");
    const got = collect(dir);
    assert.deepEqual(got.actions.map((a) => a.name), [
      path.join(".github", "actions", "new-action", "action.yml"),
      path.join(".github", "actions", "other", "action.yaml"),
    ]);
    assert.deepEqual(got.workflows.map((w) => w.name), [
      path.join(".github", "workflows", "new.yml"),
      path.join(".github", "workflows", "new2.yaml"),
      path.join("docs", "examples", "new-example.yml"),
    ]);
    assert.equal(got.readme, undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a root with nothing to check fails closed", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workflow-parser-empty-"));
  try {
    const r = run(dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no \.github\/actions\/\*\/action\.yml found/);
    assert.match(r.stderr, /no \.github\/workflows\/\*\.yml found/);
    assert.match(r.stderr, /README\.md: no ```yaml fence/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// internal/actioncontract's Go contract (MisplacedExpressions) and GitHub's
// parser agree on its testdata: GitHub refuses the action at every line the Go
// test expects (an alias is reported by GitHub at its anchor, line 18, and by
// the Go contract where it is used, line 21), and nowhere else.
test("GitHub's parser refuses internal/actioncontract's misplaced-expression testdata at the same places", () => {
  const file = path.join(root, "internal", "actioncontract", "testdata", "expressions", "misplaced.action.yml");
  const errors = checkAction("misplaced.action.yml", fs.readFileSync(file, "utf8"));
  const lines = [...new Set(errors.map((e) => Number(/\(Line: (\d+),/.exec(e)?.[1])))].sort((a, b) => a - b);
  assert.deepEqual(lines, [4, 5, 6, 9, 12, 18, 19, 26], errors.join("\n"));
});
