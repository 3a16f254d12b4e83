#!/usr/bin/env node
// Installed packages run the bundled CLI; a source checkout without a build runs the TypeScript via tsx.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const bundled = join(__dirname, "..", "dist", "cli", "krply.js");
if (existsSync(bundled)) {
  require(bundled).runCli(process.argv);
} else {
  require("tsx/cjs");
  require("../src/cli/main.ts").runCli(process.argv);
}
