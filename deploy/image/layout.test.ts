import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigSchema } from "../../src/config";
import {
  CONTROLLER_RUNTIME,
  IMAGE_ENV,
  IMAGE_LAYOUT,
  IMAGE_UID,
  PEPR_CONTROLLER_IMAGE,
  PEPR_VERSION,
  SQLITE_BINDING_PATH,
  SQLITE_STAGE_DIR,
  WRITER_SCRIPT_PATH,
} from "./layout";

const root = join(__dirname, "..", "..");
const dockerfile = readFileSync(join(root, "deploy", "Dockerfile"), "utf8");
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map(l => l.trim())
  .filter(l => l !== "" && !l.startsWith("#"));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

const args = Object.fromEntries(
  instructions
    .filter(l => l.startsWith("ARG ") && l.includes("="))
    .map(l => l.slice(4).split("=", 2) as [string, string]),
);
const copies = instructions.filter(l => l.startsWith("COPY "));

describe("deploy/Dockerfile matches deploy/image/layout.ts", () => {
  it("copies exactly the layout's entries, each owned by the image's user", () => {
    const parsed = copies.map(l => {
      const m = /^COPY (--from=(\S+) )?--chown=(\d+):(\d+) (\S+) (\S+)$/.exec(l);
      if (!m) throw new Error(`unexpected COPY line: ${l}`);
      return {
        stage: m[2] ?? "context",
        uid: Number(m[3]),
        gid: Number(m[4]),
        from: m[5],
        to: m[6],
      };
    });
    const expected = IMAGE_LAYOUT.map(e => ({
      stage: e.stage,
      uid: IMAGE_UID,
      gid: IMAGE_UID,
      from: e.stage === "sqlite" ? `${SQLITE_STAGE_DIR}/${e.from}` : e.from,
      to: e.to,
    }));
    expect(parsed).toEqual(expected);
  });

  it("starts from Pepr's controller at the version the module is built with", () => {
    const pepr = JSON.parse(
      readFileSync(join(root, "node_modules", "pepr", "package.json"), "utf8"),
    ) as { version: string };
    expect(pkg.dependencies.pepr).toBe(PEPR_VERSION);
    expect(pepr.version).toBe(PEPR_VERSION);
    expect(args.PEPR_IMAGE).toBe(PEPR_CONTROLLER_IMAGE);
    // The image `pepr build` names by default is the one we start from.
    const cli = readFileSync(join(root, "node_modules", "pepr", "dist", "cli.js"), "utf8");
    expect(cli).toContain("ghcr.io/defenseunicorns/pepr/controller:v${");
    const froms = instructions.filter(l => l.startsWith("FROM "));
    expect(froms).toEqual(["FROM ${NODE_IMAGE} AS sqlite", "FROM ${PEPR_IMAGE}"]);
  });

  it("builds the addon on the controller's own Node and libc, pinned by digest, for ABI 137", () => {
    expect(args.NODE_IMAGE).toBe(CONTROLLER_RUNTIME.image);
    expect(CONTROLLER_RUNTIME.image).toMatch(
      new RegExp(
        `:${CONTROLLER_RUNTIME.node}-alpine${CONTROLLER_RUNTIME.alpine}@sha256:[0-9a-f]{64}$`,
      ),
    );
    // Every toolchain the addon needs comes from musl's own packages; the headers are the image's.
    expect(instructions).toContain("RUN apk add --no-cache python3 make g++");
    expect(instructions).toContain("ENV npm_config_nodedir=/usr/local");
    expect(dockerfile).toContain("--build-from-source");
    expect(dockerfile).toContain(
      `process.versions.modules !== '${CONTROLLER_RUNTIME.nodeModuleVersion}'`,
    );
    // The addon is the version the code is tested with.
    expect(args.BETTER_SQLITE3_VERSION).toBe(pkg.dependencies["better-sqlite3"]);
    expect(args.BETTER_SQLITE3_VERSION).toMatch(/^12\./);
  });

  it("names the addon with KRPLY_SQLITE_BINDING, a krply setting, and runs as 65532", () => {
    expect(instructions).toContain(`ENV KRPLY_SQLITE_BINDING=${SQLITE_BINDING_PATH}`);
    // The final stage sets exactly IMAGE_ENV (what the layout test gives each container).
    const final = instructions.slice(instructions.indexOf("FROM ${PEPR_IMAGE}"));
    const env = final.filter(l => l.startsWith("ENV ")).map(l => l.slice(4).split("=", 2));
    expect(Object.fromEntries(env)).toEqual(IMAGE_ENV);
    expect(Object.keys(ConfigSchema.shape)).toContain("KRPLY_SQLITE_BINDING");
    expect(instructions.filter(l => l.startsWith("USER "))).toEqual([
      `USER ${IMAGE_UID}:${IMAGE_UID}`,
    ]);
    expect(instructions.at(-1)).toBe(`USER ${IMAGE_UID}:${IMAGE_UID}`);
    // Pepr's entrypoint stays: the chart's args and command depend on it.
    expect(instructions.some(l => /^(ENTRYPOINT|CMD) /.test(l))).toBe(false);
  });

  it("names the writer thread's script with KRPLY_WRITER_SCRIPT, a file the CLI build writes into a copied folder", () => {
    expect(instructions).toContain(`ENV KRPLY_WRITER_SCRIPT=${WRITER_SCRIPT_PATH}`);
    expect(Object.keys(ConfigSchema.shape)).toContain("KRPLY_WRITER_SCRIPT");
    // dist/cli is copied whole to /app/dist/cli, and build-cli.mjs writes chunks/writer-worker.js.
    const entry = IMAGE_LAYOUT.find(e => e.dir && WRITER_SCRIPT_PATH.startsWith(`${e.to}/`));
    expect(entry).toMatchObject({ stage: "context", from: "dist/cli" });
    const built = WRITER_SCRIPT_PATH.slice(`${entry!.to}/`.length);
    const buildCli = readFileSync(join(root, "scripts", "build-cli.mjs"), "utf8");
    expect(buildCli).toContain(
      `outfile: join(out, ${built
        .split("/")
        .map(p => `"${p}"`)
        .join(", ")})`,
    );
  });

  it("sends the build only what it copies (deploy/Dockerfile.dockerignore)", () => {
    const ignore = readFileSync(join(root, "deploy", "Dockerfile.dockerignore"), "utf8")
      .split("\n")
      .map(l => l.trim())
      .filter(l => l !== "" && !l.startsWith("#"));
    const context = IMAGE_LAYOUT.filter(e => e.stage === "context").map(e => `!${e.from}`);
    expect(ignore).toEqual(["*", ...context]);
  });
});
