import { join } from "node:path";
import {
  damagedJournalRecords,
  damagePages,
  writeJournal,
} from "../../../test/support/damaged-journal";
import { tempJournalPath } from "../../../test/support/journal-fixtures";
import { openJournalView } from "../../journal";
import { captureKrply } from "../../../test/support/cli-capture";

const run = (store: string, ...args: string[]) => captureKrply("--store", store, ...args);

describe("krply fsck --salvage", () => {
  const tmp = tempJournalPath("krply-cli-salvage-");
  afterAll(() => tmp.cleanup());

  it("copies a damaged journal's intact records into a new file and says what to do next", async () => {
    writeJournal(tmp.path, damagedJournalRecords(1700));
    damagePages(tmp.path, 0.3, 8);
    const target = join(tmp.dir, "salvaged.db");
    const text = await run(tmp.path, "fsck", "--salvage", target);
    expect(text).toMatch(
      new RegExp(`salvaged \\d+ records of ${tmp.path} into ${target}; [1-9]\\d* lost`),
    );
    expect(text).toMatch(/3 stream checkpoints|gap records written/);
    expect(text).toMatch(/next: stop krply/);
    const v = openJournalView(target);
    try {
      expect(v.fsck().ok).toBe(true);
    } finally {
      v.close();
    }
    // A second salvage into the same file is refused.
    await expect(run(tmp.path, "fsck", "--salvage", target)).rejects.toThrow(/exists/);
  });
});
