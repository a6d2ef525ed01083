// Loads action metadata and workflows with GitHub's own parser,
// @actions/workflow-parser (the package behind the Actions language service;
// pinned in package.json / package-lock.json): parseAction +
// convertActionTemplate for action.yml files, parseWorkflow +
// convertWorkflowTemplate for workflows. Every error the parser reports is
// returned as "<file> (Line: L, Col: C): <message>", the form the runner
// prints at "Set up job" (for example "Unrecognized named-value: 'runner'").

import fs from "node:fs";
import path from "node:path";
import { register } from "node:module";

register(new URL("./json-attribute-hook.mjs", import.meta.url));

const { parseWorkflow, convertWorkflowTemplate, NoOperationTraceWriter } = await import(
  "@actions/workflow-parser"
);
// parseAction is exported from the package's actions/ entry point (the
// package root exports only the workflow side).
const { parseAction, convertActionTemplate } = await import(
  "@actions/workflow-parser/actions/index"
);

// The README section that holds the consumer workflow (one ```yaml fence).
export const readmeBegin = "<!-- consumer-workflow:begin -->";
export const readmeEnd = "<!-- consumer-workflow:end -->";

function messages(name, errors) {
  return errors.map((e) => {
    const m = e.message ?? e.Message ?? String(e);
    return m.startsWith(name) ? m : `${name}: ${m}`;
  });
}

/**
 * Parses one action.yml the way the runner does before "Set up job".
 * @param {string} name file name used in the messages
 * @param {string} content the file's text
 * @returns {string[]} the parser's errors (empty: the action loads)
 */
export function checkAction(name, content) {
  const result = parseAction({ name, content }, new NoOperationTraceWriter());
  if (result.value !== undefined) {
    convertActionTemplate(result.context, result.value);
  }
  const errors = messages(name, result.context.errors.getErrors());
  if (errors.length === 0 && result.value === undefined) {
    errors.push(`${name}: the parser returned no template and no error`);
  }
  return errors;
}

/**
 * Parses and converts one workflow the way GitHub does when it queues a run.
 * @param {string} name file name used in the messages
 * @param {string} content the file's text
 * @returns {Promise<string[]>} the parser's errors (empty: the workflow loads)
 */
export async function checkWorkflow(name, content) {
  const result = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  if (result.value === undefined) {
    const errors = messages(name, result.context.errors.getErrors());
    return errors.length > 0 ? errors : [`${name}: the parser returned no template and no error`];
  }
  const template = await convertWorkflowTemplate(result.context, result.value);
  return messages(name, template.errors ?? []);
}

/**
 * Extracts the README's consumer workflow, padded with blank lines so the
 * parser's line numbers are README.md line numbers.
 * @param {string} readme README.md's text
 * @returns {string | undefined} the workflow, or undefined without the section
 */
export function readmeWorkflow(readme) {
  const begin = readme.indexOf(readmeBegin + "\n");
  if (begin < 0) return undefined;
  const after = begin + readmeBegin.length + 1;
  const end = readme.indexOf(readmeEnd, after);
  if (end < 0) return undefined;
  const block = readme.slice(after, end);
  const fence = "```yaml\n";
  if (!block.startsWith(fence) || !block.endsWith("```\n")) return undefined;
  const body = block.slice(fence.length, block.length - "```\n".length);
  const skipped = readme.slice(0, after + fence.length).split("\n").length - 1;
  return "\n".repeat(skipped) + body;
}

function listYAML(dir, pattern) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === "ENOENT") return [];
    throw err;
  }
  return entries
    .filter((e) => e.isFile() && pattern.test(e.name))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/**
 * The files the check loads under a repository root: every
 * .github/actions/<dir>/action.yml (or .yaml), every .github/workflows/*.yml
 * (or .yaml), every docs/examples/*.yml (or .yaml), and README.md's consumer
 * workflow. Paths are relative to root.
 * @param {string} root repository root
 */
export function collect(root) {
  const rel = (p) => path.relative(root, p);
  const actionsDir = path.join(root, ".github", "actions");
  const actions = [];
  for (const e of fs.existsSync(actionsDir) ? fs.readdirSync(actionsDir, { withFileTypes: true }) : []) {
    if (!e.isDirectory()) continue;
    actions.push(...listYAML(path.join(actionsDir, e.name), /^action\.ya?ml$/));
  }
  actions.sort();
  const workflows = [
    ...listYAML(path.join(root, ".github", "workflows"), /\.ya?ml$/),
    ...listYAML(path.join(root, "docs", "examples"), /\.ya?ml$/),
  ];
  return {
    actions: actions.map((p) => ({ name: rel(p), content: fs.readFileSync(p, "utf8") })),
    workflows: workflows.map((p) => ({ name: rel(p), content: fs.readFileSync(p, "utf8") })),
    readme: fs.existsSync(path.join(root, "README.md"))
      ? fs.readFileSync(path.join(root, "README.md"), "utf8")
      : undefined,
  };
}

/**
 * Checks everything collect() finds under root.
 * @param {string} root repository root
 * @returns {Promise<{actions: number, workflows: number, errors: string[]}>}
 */
export async function checkRepository(root) {
  const { actions, workflows, readme } = collect(root);
  const errors = [];
  if (actions.length === 0) errors.push(`${root}: no .github/actions/*/action.yml found`);
  if (workflows.length === 0) errors.push(`${root}: no .github/workflows/*.yml found`);
  for (const a of actions) errors.push(...checkAction(a.name, a.content));
  for (const w of workflows) errors.push(...(await checkWorkflow(w.name, w.content)));
  let loaded = workflows.length;
  const block = readme === undefined ? undefined : readmeWorkflow(readme);
  if (block === undefined) {
    errors.push(`README.md: no \`\`\`yaml fence between ${readmeBegin} and ${readmeEnd}`);
  } else {
    errors.push(...(await checkWorkflow("README.md", block)));
    loaded++;
  }
  return { actions: actions.length, workflows: loaded, errors };
}
