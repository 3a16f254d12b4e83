import { join, resolve } from "node:path";
import { cliCacheDirOf } from "./config-early";

describe("cliCacheDirOf", () => {
  it("takes KRPLY_CLI_CACHE first; `off` means no cache", () => {
    expect(cliCacheDirOf({ KRPLY_CLI_CACHE: " /var/cache/k ", HOME: "/home/u" })).toBe(
      "/var/cache/k",
    );
    expect(cliCacheDirOf({ KRPLY_CLI_CACHE: "rel/dir" })).toBe(resolve("rel/dir"));
    expect(cliCacheDirOf({ KRPLY_CLI_CACHE: "off", HOME: "/home/u" })).toBeNull();
  });

  it("otherwise uses the user's cache folder of the platform", () => {
    expect(cliCacheDirOf({ HOME: "/home/u" }, "linux")).toBe(join("/home/u", ".cache", "krply"));
    expect(cliCacheDirOf({ HOME: "/home/u", XDG_CACHE_HOME: "/x" }, "linux")).toBe(
      join("/x", "krply"),
    );
    // The XDG spec says to ignore a relative path.
    expect(cliCacheDirOf({ HOME: "/home/u", XDG_CACHE_HOME: "x" }, "linux")).toBe(
      join("/home/u", ".cache", "krply"),
    );
    expect(cliCacheDirOf({ HOME: "/Users/u" }, "darwin")).toBe(
      join("/Users/u", "Library", "Caches", "krply"),
    );
    expect(cliCacheDirOf({ LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32")).toBe(
      join("C:\\Users\\u\\AppData\\Local", "krply", "Cache"),
    );
  });

  it("is null when there is no home to keep it in", () => {
    expect(cliCacheDirOf({}, "linux")).toBeNull();
    expect(cliCacheDirOf({ HOME: " " }, "linux")).toBeNull();
    expect(cliCacheDirOf({}, "win32")).toBeNull();
  });
});
