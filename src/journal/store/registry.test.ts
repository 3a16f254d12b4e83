import Database from "better-sqlite3";
import { streamIdOf } from "../../event";
import { streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";
import { migrate } from "./schema";
import { Store } from "./store";

describe("Registry", () => {
  const tmp = tempJournalPath();
  let db: Database.Database;
  let store: Store;
  beforeAll(() => {
    db = new Database(tmp.path);
    migrate(db, false);
    store = new Store(db);
  });
  afterAll(() => {
    db.close();
    tmp.cleanup();
  });

  it("registers an identity once and says which call created it", () => {
    const first = store.registry.registerObject("c", "apps", "Deployment", "shop", "web");
    expect(first.created).toBe(true);
    const again = store.registry.registerObject("c", "apps", "Deployment", "shop", "web");
    expect(again).toEqual({ id: first.id, created: false });
    // The answer does not depend on the cache: a fresh registry over the same file agrees.
    const fresh = new Store(db);
    expect(fresh.registry.registerObject("c", "apps", "Deployment", "shop", "web")).toEqual({
      id: first.id,
      created: false,
    });
    expect(fresh.registry.objectRow(first.id)).toMatchObject({ kind: "Deployment", name: "web" });
  });

  it("finds without registering", () => {
    expect(store.registry.findObject("c", "", "ConfigMap", "shop", "nope")).toBeNull();
    const { id } = store.registry.registerObject("c", "", "ConfigMap", "shop", "cfg");
    expect(store.registry.findObject("c", "", "ConfigMap", "shop", "cfg")).toBe(id);
    // The group is part of the identity.
    expect(store.registry.findObject("c", "x.dev", "ConfigMap", "shop", "cfg")).toBeNull();
  });

  it("finds a stream another connection added after this one last read the registry", () => {
    // A reader (the sidecar, `krply timeline`) reads while the recorder adds a stream: the record it
    // reads can name a stream its maps do not hold yet, which is not damage.
    const reader = new Store(db);
    const writer = new Store(new Database(tmp.path));
    try {
      const id = streamIdOf(streamKey("widgets", "example.com", "v1", "shop", "c"));
      const added = writer.registry.ensureStream(id, "c");
      expect(reader.registry.streams.get(added.id)).toBeUndefined();
      expect(reader.registry.streamOf(added.id, 7)).toMatchObject({ id: added.id, streamId: id });
    } finally {
      writer.db.close();
    }
  });

  it("registers a stream once and refuses a record whose cluster is not the stream's", () => {
    const id = streamIdOf(streamKey("deployments", "apps", "v1", "shop", "c"));
    const s = store.registry.ensureStream(id, "c");
    expect(store.registry.ensureStream(id, "c")).toBe(s);
    expect(store.registry.streamOf(s.id, 1)).toBe(s);
    expect(() => store.registry.streamOf(9999, 5)).toThrow(
      /record 5 points at unknown stream 9999/,
    );
    expect(() =>
      store.registry.ensureStream(
        streamIdOf(streamKey("statefulsets", "apps", "v1", "shop", "c")),
        "other",
      ),
    ).toThrow(/does not match its stream/);
  });
});
