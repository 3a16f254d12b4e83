import {
  damagedJournalRecords,
  garbleRecordBody,
  writeJournal,
} from "../../../test/support/damaged-journal";
import { tempJournalPath } from "../../../test/support/journal-fixtures";
import { openJournal, openJournalView } from "../index";
import { TAIL_ROWS } from "./fsck";

// The check at open decodes only the newest TAIL_ROWS records, so a recorder's start does not grow
// with its journal; the full check (krply fsck, the scheduled job) decodes every record.
describe("the tail check at open", () => {
  const records = damagedJournalRecords(1700);
  let tmp: ReturnType<typeof tempJournalPath>;

  beforeEach(() => {
    tmp = tempJournalPath("krply-tail-check-");
    writeJournal(tmp.path, records);
  });
  afterEach(() => tmp.cleanup());

  it("decodes a bounded number of the newest records, however many the journal holds", () => {
    expect(records.length).toBeGreaterThan(2 * TAIL_ROWS);
    const view = openJournalView(tmp.path);
    try {
      const report = view.tailCheck(TAIL_ROWS);
      expect(report).toEqual({ ok: true, checked: TAIL_ROWS, problems: [] });
      expect(view.fsck()).toMatchObject({ ok: true, checked: records.length });
    } finally {
      view.close();
    }
  });

  it("opens past damage older than its window, which the full check finds", () => {
    garbleRecordBody(tmp.path, 2);
    openJournal(tmp.path, { check: "tail" }).close();
    expect(() => openJournal(tmp.path, { check: "full" })).toThrow(
      expect.objectContaining({ code: "CORRUPT" }),
    );
  });

  it("refuses damage among the newest records", () => {
    garbleRecordBody(tmp.path, records.length);
    expect(() => openJournal(tmp.path, { check: "tail" })).toThrow(
      expect.objectContaining({
        code: "CORRUPT",
        message: expect.stringMatching(/failed its check/),
      }),
    );
  });
});
