import { JournalError } from "../journal";
import { z } from "zod";
import { CliError, EXIT, explain } from "./errors";

describe("explain", () => {
  it("maps the journal's typed errors to their exit codes, naming the journal", () => {
    expect(explain(new JournalError("x", "NOT_FOUND"), "j.db")).toMatchObject({
      exitCode: EXIT.NOT_FOUND,
      message: "journal j.db does not exist (pass --store FILE or set KRPLY_JOURNAL)",
    });
    const corrupt = new JournalError("read j.db: journal is corrupt", "CORRUPT", {
      cause: new Error("database disk image is malformed"),
    });
    expect(explain(corrupt, "j.db")).toMatchObject({
      exitCode: EXIT.DAMAGED,
      message:
        "journal j.db is damaged (database disk image is malformed); run `krply fsck --store j.db` to see what",
    });
    for (const code of ["BUSY", "IO", "READONLY", "SCHEMA_NEWER", "DISK_FULL"] as const)
      expect(explain(new JournalError("m", code), "j.db").exitCode).toBe(EXIT.UNAVAILABLE);
    // A wrapper keeps the journal's error as its cause.
    expect(explain(new Error("cannot open", { cause: corrupt }), "j.db").exitCode).toBe(
      EXIT.DAMAGED,
    );
  });

  it("turns a zod error into one line per field, and materialize's not-found into 3", () => {
    const zerr = z.object({ a: z.number() }).safeParse({ a: "x" }).error!;
    const e = explain(zerr);
    expect(e.exitCode).toBe(EXIT.USAGE);
    expect(e.message).toMatch(/^a: /);
    expect(e.message).not.toMatch(/\n/);
    expect(explain(new Error('kind "foo" was never recorded in cluster c1')).exitCode).toBe(
      EXIT.NOT_FOUND,
    );
    expect(explain(new Error("boom\n    at x (y.js:1:1)"))).toMatchObject({
      exitCode: EXIT.FAILURE,
      message: "boom",
    });
    const mine = new CliError("m", EXIT.DENIED);
    expect(explain(mine)).toBe(mine);
  });
});
