import { toJournalError } from "./errors";
import { JournalError } from "./types";

const sqlite = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("toJournalError", () => {
  it.each([
    ["SQLITE_FULL", "database or disk is full", "DISK_FULL", /append: disk full/],
    ["ENOSPC", "no space left on device", "DISK_FULL", /disk full/],
    ["SQLITE_IOERR_WRITE", "disk I/O error: no space", "DISK_FULL", /disk full/],
    ["SQLITE_IOERR_FSYNC", "disk I/O error", "IO", /append: I\/O error/],
    ["SQLITE_CORRUPT", "database disk image is malformed", "CORRUPT", /journal is corrupt/],
    ["SQLITE_NOTADB", "file is not a database", "CORRUPT", /journal is corrupt/],
    ["SQLITE_BUSY", "database is locked", "BUSY", /journal is busy \(database is locked\)/],
    ["SQLITE_BUSY_RECOVERY", "database is locked", "BUSY", /journal is busy/],
    ["SQLITE_LOCKED", "database table is locked", "BUSY", /journal is busy/],
    ["SQLITE_READONLY", "attempt to write a readonly database", "READONLY", /readonly/],
    ["SQLITE_MISUSE", "bad parameter", "IO", /append: bad parameter/],
  ])("maps %s to %s, keeping the original as its cause", (code, message, want, text) => {
    const original = sqlite(code, message);
    const e = toJournalError(original, "append");
    expect(e).toBeInstanceOf(JournalError);
    expect(e.code).toBe(want);
    expect(e.message).toMatch(text);
    expect(e.cause).toBe(original);
  });

  it("passes a JournalError through and wraps anything else as IO", () => {
    const typed = new JournalError("closed", "CLOSED");
    expect(toJournalError(typed, "append")).toBe(typed);
    expect(toJournalError("boom", "open x")).toMatchObject({ code: "IO", message: "open x: boom" });
  });
});
