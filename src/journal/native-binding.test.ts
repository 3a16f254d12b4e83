import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { nativeBindingInUse, openJournal, openJournalView, useNativeBinding } from "./index";
import { JournalError } from "./types";

// The addon npm built for this Node; the image builds its own and names it with KRPLY_SQLITE_BINDING.
const installed = require.resolve("better-sqlite3/build/Release/better_sqlite3.node");

describe("the process-wide native addon (KRPLY_SQLITE_BINDING)", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  beforeEach(() => (tmp = tempJournalPath("krply-binding-")));
  afterEach(() => {
    useNativeBinding(undefined);
    tmp.cleanup();
  });

  it("opens with the package's own addon while none is set", () => {
    expect(nativeBindingInUse()).toBeUndefined();
    openJournal(tmp.path).close();
    openJournalView(tmp.path).close();
  });

  it("loads the addon it names, copied away from the package, for the writer and the views", () => {
    // A copy outside node_modules, where the image puts its own build (/app/lib).
    const copy = join(tmp.dir, "addon.node");
    copyFileSync(installed, copy);
    useNativeBinding(copy);
    expect(nativeBindingInUse()).toBe(copy);
    openJournal(tmp.path).close();
    openJournalView(tmp.path).close();
  });

  it("fails the open, as a JournalError, when the named addon is not a loadable addon", () => {
    const bogus = join(tmp.dir, "broken.node");
    writeFileSync(bogus, "not an ELF file");
    useNativeBinding(bogus);
    let caught: unknown;
    try {
      openJournal(tmp.path).close();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(JournalError);
    expect(String((caught as Error).message)).toMatch(/broken\.node|ELF|invalid/i);
  });

  it("an open that names its own addon wins over the process default", () => {
    useNativeBinding(join(tmp.dir, "missing.node"));
    openJournal(tmp.path, { nativeBinding: installed }).close();
  });
});
