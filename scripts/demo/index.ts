// Entry of `npm run demo`. The recorder's logs would bury the demo's own lines, so only errors are
// logged unless KRPLY_LOG_LEVEL says otherwise; set before anything that creates a logger loads.
process.env.KRPLY_LOG_LEVEL ??= "error";

void import("./main").then(m => m.main(process.argv.slice(2)).then(code => process.exit(code)));
