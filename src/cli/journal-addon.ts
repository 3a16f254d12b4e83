// Which better-sqlite3 addon the CLI's journal opens load. Kept out of src/cli/program.ts so that
// `--help` loads nothing of SQLite, not even its name (test/integration/cli.test.ts, "start-up").
import { sqliteBindingOf } from "../config-early";
import { useNativeBinding } from "../journal";

/**
 * better-sqlite3's own addon, named outright: the bundled CLI carries the package's JavaScript (so
 * it loads with the code cache), where the package's own search for its addon (the `bindings`
 * module, which looks beside the calling file) cannot work. Undefined when it is not where npm
 * builds it.
 */
function packageAddon(): string | undefined {
  try {
    return require.resolve("better-sqlite3/build/Release/better_sqlite3.node");
  } catch {
    return undefined;
  }
}

/** Sets the addon for every journal this process opens: KRPLY_SQLITE_BINDING, else the package's. */
export function useJournalAddon(env: Readonly<Record<string, string | undefined>>): void {
  useNativeBinding(sqliteBindingOf(env) ?? packageAddon());
}
