// Entry point for the post step; see tools/launcher/node-shim.js.
require("../../../tools/launcher/node-shim.js").run("post");
