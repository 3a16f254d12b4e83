#!/usr/bin/env node
// Installed packages run the bundled CLI (CommonJS chunks run with V8's code cache, see
// scripts/build-cli.mjs); a source checkout without a build runs the TypeScript via tsx. Installed
// as `krply` and as the kubectl plugin `kubectl-krply` (krew naming), so
// `kubectl krply timeline deploy/web -n shop` runs this too.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const bundled = join(__dirname, "..", "dist", "cli", "krply.js");
if (existsSync(bundled)) {
  // require, not import(): the bundle is CommonJS, and Node's ES module loader costs a few ms more.
  require(bundled).runCli(process.argv);
} else {
  // Commands import their heavy parts with import(), which the CommonJS hook alone cannot resolve to
  // extensionless .ts files; tsx's ES module hook does.
  require("tsx/cjs");
  require("tsx/esm/api").register();
  require("../src/cli/main.ts").runCli(process.argv);
}
