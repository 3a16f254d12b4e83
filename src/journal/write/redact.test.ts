import { readFileSync, existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import { eventRecord } from "../../event";
import { JournalError, openJournal } from "../index";
import { digestValue, redactObject, REDACTED_PREFIX, type RedactPolicy } from "./redact";
import { at, configMap, streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";

const policy: RedactPolicy = {
  kinds: new Set(["Credential"]),
  configMapKeyPatterns: [/password/i, /^token$/],
  salt: "s",
};
const PLAIN = "hunter2-correct-horse-battery";
const B64 = Buffer.from(PLAIN).toString("base64");

function secret(rv: number, value: string) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: "db",
      namespace: "shop",
      uid: "s1",
      resourceVersion: String(rv),
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({
          stringData: { password: value },
        }),
      },
    },
    data: {
      password: Buffer.from(value).toString("base64"),
      user: Buffer.from("app").toString("base64"),
    },
    stringData: { extra: value },
  };
}

describe("redaction", () => {
  it("keeps key names and replaces values with salted digests", () => {
    const { object, redacted } = redactObject(secret(1, PLAIN), "Secret", policy);
    expect(redacted).toBe(true);
    expect(Object.keys(object.data as object)).toEqual(["password", "user"]);
    expect((object.data as Record<string, string>).password).toBe(digestValue(B64, "s"));
    expect(object.type).toBe("Opaque");
    expect(JSON.stringify(object)).not.toContain(PLAIN);
    expect(JSON.stringify(object)).not.toContain(B64);
    expect(digestValue("x", "a")).not.toBe(digestValue("x", "b"));
  });

  it("redacts listed kinds and matching ConfigMap keys only", () => {
    const cred = redactObject(
      { kind: "Credential", metadata: { name: "c" }, spec: { apiKey: "k" } },
      "Credential",
      policy,
    );
    expect((cred.object.spec as Record<string, string>).apiKey).toMatch(REDACTED_PREFIX);
    const cm = redactObject(
      configMap("c", "ns", "u", 1, { DB_PASSWORD: "p", token: "t", mode: "fast" }),
      "ConfigMap",
      policy,
    );
    expect(cm.object.data).toEqual({
      DB_PASSWORD: digestValue("p", "s"),
      token: digestValue("t", "s"),
      mode: "fast",
    });
    const plain = configMap("c", "ns", "u", 1, { mode: "fast" });
    expect(redactObject(plain, "ConfigMap", policy)).toEqual({ object: plain, redacted: false });
  });

  it("digests every listed manifest-copy annotation, kapp's by default", () => {
    const s = secret(1, PLAIN);
    (s.metadata.annotations as Record<string, string>)["kapp.k14s.io/original"] = JSON.stringify({
      data: { password: B64 },
    });
    (s.metadata.annotations as Record<string, string>)["example.com/copy"] = PLAIN;
    const byDefault = redactObject(s, "Secret", policy).object;
    const ann = (byDefault.metadata as { annotations: Record<string, string> }).annotations;
    expect(ann["kapp.k14s.io/original"]).toMatch(REDACTED_PREFIX);
    expect(ann["kubectl.kubernetes.io/last-applied-configuration"]).toMatch(REDACTED_PREFIX);
    expect(ann["example.com/copy"]).toBe(PLAIN); // not listed
    const listed = redactObject(s, "Secret", { ...policy, annotations: ["example.com/copy"] });
    const ann2 = (listed.object.metadata as { annotations: Record<string, string> }).annotations;
    expect(ann2["example.com/copy"]).toMatch(REDACTED_PREFIX);
    expect(ann2["kapp.k14s.io/original"]).not.toMatch(REDACTED_PREFIX);
  });

  it("keeps the digest key out of the journal file: from the key file, or one made beside it", () => {
    const tmp = tempJournalPath();
    try {
      const keyFile = join(tmp.dir, "key");
      const key = "k".repeat(20) + "-from-a-secret";
      writeFileSync(keyFile, `${key}\n`);
      const stream = streamKey("secrets", "", "v1", "shop");
      const rec = eventRecord({
        stream,
        watchType: "ADDED",
        object: secret(1, PLAIN),
        observedAt: at(1),
      });
      const j = openJournal(tmp.path, { redact: { keyFile } });
      j.append({ records: [rec], checkpoints: [] });
      const stored = j.objectHistory({
        clusterId: "test",
        kind: "Secret",
        namespace: "shop",
        name: "db",
      });
      expect((stored[0].object as unknown as { data: { password: string } }).data.password).toBe(
        digestValue(B64, key),
      );
      j.checkpointWal();
      j.close();
      expect(readFileSync(tmp.path).includes(Buffer.from(key))).toBe(false);
      const db = new Database(tmp.path, { readonly: true });
      expect(db.prepare("SELECT value FROM meta WHERE key LIKE '%salt%'").all()).toEqual([]);
      db.close();
      // A configured key file that is missing stops the open: a new key would change every digest.
      expect(() => openJournal(tmp.path, { redact: { keyFile: join(tmp.dir, "none") } })).toThrow(
        JournalError,
      );
      // Without one, a key file beside the journal is created once, readable by its owner only.
      const other = join(tmp.dir, "other.db");
      openJournal(other).close();
      const made = `${other}-digest.key`;
      expect(statSync(made).mode & 0o077).toBe(0);
      const first = readFileSync(made, "utf8");
      openJournal(other).close();
      expect(readFileSync(made, "utf8")).toBe(first);
    } finally {
      tmp.cleanup();
    }
  });

  it("moves a key an older krply kept inside the journal into the key file", () => {
    const tmp = tempJournalPath();
    try {
      openJournal(tmp.path).close();
      rmSync(`${tmp.path}-digest.key`);
      const db = new Database(tmp.path);
      db.prepare(
        "INSERT INTO meta (key, value) VALUES ('redact_salt', 'legacy-salt-0123456789')",
      ).run();
      db.close();
      openJournal(tmp.path).close();
      expect(readFileSync(`${tmp.path}-digest.key`, "utf8").trim()).toBe("legacy-salt-0123456789");
      const after = new Database(tmp.path, { readonly: true });
      expect(after.prepare("SELECT value FROM meta WHERE key='redact_salt'").get()).toBeUndefined();
      after.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("never lets a secret value reach the database or WAL bytes", () => {
    const tmp = tempJournalPath();
    const j = openJournal(tmp.path, {
      redact: { configMapKeyPatterns: [/password/i] },
      sync: "NORMAL",
    });
    try {
      const stream = streamKey("secrets", "", "v1", "shop");
      const values = [PLAIN, `${PLAIN}-rotated`, `${PLAIN}-again`];
      j.append({
        records: values.map((v, i) =>
          eventRecord({
            stream,
            watchType: i ? "MODIFIED" : "ADDED",
            object: secret(i + 1, v),
            observedAt: at(i),
          }),
        ),
        checkpoints: [],
      });
      const cms = streamKey("configmaps", "", "v1", "shop");
      j.append({
        records: [
          eventRecord({
            stream: cms,
            watchType: "ADDED",
            object: configMap("app", "shop", "c1", 9, { DB_PASSWORD: PLAIN, mode: "x" }),
            observedAt: at(9),
          }),
        ],
        checkpoints: [],
      });
      const hist = j.objectHistory({
        clusterId: "test",
        kind: "Secret",
        namespace: "shop",
        name: "db",
      });
      expect(hist).toHaveLength(3);
      // Each rotation shows up as a different digest, so changes stay visible without the value.
      const digests = new Set(
        hist.map(r => (r.object as unknown as { data: { password: string } }).data.password),
      );
      expect(digests.size).toBe(3);
      const files = [tmp.path, `${tmp.path}-wal`].filter(existsSync);
      expect(files.some(f => f.endsWith("-wal"))).toBe(true);
      const raw = Buffer.concat(files.map(f => readFileSync(f)));
      expect(raw.length).toBeGreaterThan(0);
      // Large bodies are deflated, so inflate every stored body too: compression is not redaction.
      const db = new Database(tmp.path, { readonly: true });
      const bodies = (
        db.prepare("SELECT body FROM records WHERE body IS NOT NULL").all() as { body: Buffer }[]
      ).map(r => {
        try {
          return inflateRawSync(r.body);
        } catch {
          return r.body;
        }
      });
      db.close();
      for (const hay of [raw, ...bodies]) {
        for (const needle of [
          PLAIN,
          "hunter2",
          B64,
          Buffer.from(`${PLAIN}-rotated`).toString("base64"),
        ]) {
          expect(hay.includes(Buffer.from(needle))).toBe(false);
        }
      }
    } finally {
      j.close();
      tmp.cleanup();
    }
  });
});
