// node-shim.js: the node24 entry point of acquire-build-lock-with-cleanup, the one
// action that needs a `post:` step (composite actions cannot have one:
// https://github.com/actions/runner/issues/1478).
//
// Usage: node node-shim.js main|post   (or require(...).run("main"|"post"))
//
// It only starts the platform's launcher for `acquire` with BUILD_LOCK_MODE set:
//   main -> BUILD_LOCK_MODE=acquire, BUILD_LOCK_REGISTER_POST_CLEANUP=1
//   post -> BUILD_LOCK_MODE=post-cleanup
// Linux and macOS: bash tools/launcher/launch.sh acquire.
// Windows: Windows PowerShell 5.1 (always present) running
//   tools/launcher/launch.ps1 acquire; no Git Bash is needed.
// It forwards stdio and exits with the child's exit code (128+signal number
// if the child was killed).
//
// Cancellation. On Linux and macOS the runner signals only node (SIGINT, then
// SIGTERM; https://github.com/actions/runner/issues/1309), so the shim
// forwards both to the child, whose exec'd binary receives them. On Windows
// the runner generates CTRL_C and then CTRL_BREAK on the step's console
// (actions/runner src/Runner.Sdk/ProcessInvoker.cs), which every process on
// that console receives, the binary included: the shim must NOT forward
// anything (child.kill() on Windows is TerminateProcess, which would skip the
// binary's cleanup); it only ignores the events itself and waits for the
// child to finish. The spawn is asynchronous so the event loop stays free.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const MODES = {
  main: { BUILD_LOCK_MODE: "acquire", BUILD_LOCK_REGISTER_POST_CLEANUP: "1" },
  post: { BUILD_LOCK_MODE: "post-cleanup" },
};

// launcherCommand returns [file, args] for the platform's launcher.
function launcherCommand(platform, env) {
  if (platform === "win32") {
    // The absolute path, not PATH: Windows PowerShell 5.1 ships in this
    // directory on every supported Windows.
    const root = env.SystemRoot || env.windir || "C:\\Windows";
    const ps = path.join(root, "System32", "WindowsPowerShell", "v1.0", "powershell.exe");
    return [
      fs.existsSync(ps) ? ps : "powershell.exe",
      ["-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
        "-File", path.join(__dirname, "launch.ps1"), "acquire"],
    ];
  }
  return ["bash", [path.join(__dirname, "launch.sh"), "acquire"]];
}

function run(mode) {
  const extra = MODES[mode];
  if (!extra) {
    process.stderr.write("build-lock node shim: usage: node node-shim.js main|post\n");
    process.exit(2);
  }
  const [file, args] = launcherCommand(process.platform, process.env);
  const child = spawn(file, args, {
    stdio: "inherit",
    env: Object.assign({}, process.env, extra),
    windowsHide: true,
  });
  if (process.platform === "win32") {
    for (const sig of ["SIGINT", "SIGBREAK"]) {
      process.on(sig, () => {}); // the child got the same console event
    }
  } else {
    for (const sig of ["SIGINT", "SIGTERM"]) {
      process.on(sig, () => {
        if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      });
    }
  }
  child.on("error", (err) => {
    process.stderr.write(`build-lock node shim: cannot start ${file}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (code !== null) process.exit(code);
    process.exit(128 + (os.constants.signals[signal] || 0));
  });
}

module.exports = { run, launcherCommand };

if (require.main === module) {
  run(process.argv[2]);
}
