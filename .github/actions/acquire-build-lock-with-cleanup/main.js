// Entry point for the main step; see tools/launcher/node-shim.js.
require("../../../tools/launcher/node-shim.js").run("main");
