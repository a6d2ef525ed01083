// node-shim.js: the node24 entry point of acquire-build-lock-with-cleanup, the one
// action that needs a `post:` step (composite actions cannot have one:
// https://github.com/actions/runner/issues/1478).
//
// Usage: node node-shim.js main|post   (or require(...).run("main"|"post"))
//
// It only execs `bash launch.sh acquire` with BUILD_LOCK_MODE set:
//   main -> BUILD_LOCK_MODE=acquire, BUILD_LOCK_REGISTER_POST_CLEANUP=1
//   post -> BUILD_LOCK_MODE=post-cleanup
// It forwards stdio, forwards SIGINT/SIGTERM to the child (the runner signals
// node, not its children: https://github.com/actions/runner/issues/1309), and
// exits with the child's exit code (128+signal number if the child was killed).
// The spawn is asynchronous so node's event loop stays free to forward signals.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const MODES = {
  main: { BUILD_LOCK_MODE: "acquire", BUILD_LOCK_REGISTER_POST_CLEANUP: "1" },
  post: { BUILD_LOCK_MODE: "post-cleanup" },
};

// On Windows, `bash` on PATH can be WSL's launcher (System32\bash.exe);
// prefer Git Bash, which is what `shell: bash` uses on Windows runners.
function bashPath() {
  if (process.platform === "win32") {
    const candidates = [process.env.ProgramFiles, process.env["ProgramFiles(x86)"]]
      .filter(Boolean)
      .map((dir) => path.join(dir, "Git", "bin", "bash.exe"));
    for (const c of candidates) {
      if (fs.existsSync(c)) return c;
    }
  }
  return "bash";
}

function run(mode) {
  const extra = MODES[mode];
  if (!extra) {
    process.stderr.write("build-lock node shim: usage: node node-shim.js main|post\n");
    process.exit(2);
  }
  const child = spawn(bashPath(), [path.join(__dirname, "launch.sh"), "acquire"], {
    stdio: "inherit",
    env: Object.assign({}, process.env, extra),
  });
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.on(sig, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    });
  }
  child.on("error", (err) => {
    process.stderr.write(`build-lock node shim: cannot start bash: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (code !== null) process.exit(code);
    process.exit(128 + (os.constants.signals[signal] || 0));
  });
}

module.exports = { run };

if (require.main === module) {
  run(process.argv[2]);
}
