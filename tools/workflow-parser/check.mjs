#!/usr/bin/env node
// make workflow-parser: loads every action.yml and workflow of the repository
// with GitHub's own parser (lib.mjs says what and how) and exits 1 on any
// error, printing each as "<file> (Line: L, Col: C): <message>".
//
//   node check.mjs [ROOT]                   the repository (default: ../..)
//   node check.mjs --action FILE...         only these action.yml files
//   node check.mjs --workflow FILE...       only these workflow files

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkAction, checkWorkflow, checkRepository } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let summary;
if (args[0] === "--action" || args[0] === "--workflow") {
  const files = args.slice(1);
  if (files.length === 0) {
    console.error(`usage: node check.mjs ${args[0]} FILE...`);
    process.exit(2);
  }
  const errors = [];
  for (const f of files) {
    const content = fs.readFileSync(f, "utf8");
    errors.push(...(args[0] === "--action" ? checkAction(f, content) : await checkWorkflow(f, content)));
  }
  summary = {
    actions: args[0] === "--action" ? files.length : 0,
    workflows: args[0] === "--workflow" ? files.length : 0,
    errors,
  };
} else {
  summary = await checkRepository(args[0] ?? path.resolve(here, "..", ".."));
}
for (const e of summary.errors) console.error(`workflow-parser: ${e}`);
console.log(
  `workflow-parser: ${summary.actions} action(s), ${summary.workflows} workflow(s) checked with @actions/workflow-parser, ${summary.errors.length} error(s)`,
);
process.exit(summary.errors.length > 0 ? 1 : 0);
