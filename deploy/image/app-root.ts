// A container without a container engine, for the image layout test: a root directory holding the
// image's /app (assemble.ts) and the files the pod mounts, entered with chroot as the image's user
// inside a private mount namespace. The host's /usr (Node, libc) and /dev are bind-mounted in; those
// mounts exist only in the namespace and vanish with its processes, so nothing leaks onto the host.
import { spawn, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { IMAGE_UID } from "./layout";

/** The mount script: argv is root, the read-only bind sources, "--", then the command. */
const ENTER = `
set -e
root="$1"; shift
mount --rbind /usr "$root/usr"
mount -o remount,bind,ro "$root/usr"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
while [ "$1" != "--" ]; do
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  mount -o remount,bind,ro "$root$1"
  shift
done
shift
exec chroot --userspec=${IMAGE_UID}:${IMAGE_UID} "$root" "$@"
`;

/** Why this machine cannot enter a root, or null when it can (root, with unshare and chroot). */
export function cannotEnterRoot(): string | null {
  if (process.getuid?.() !== 0) return "entering a root needs uid 0 (mount namespaces, chroot)";
  return null;
}

/** Creates the skeleton of a root file system in `dir`; the caller adds /app and the mounts' files. */
export function prepareRoot(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // The image's user must be able to walk from / to /app.
  chmodSync(dir, 0o755);
  for (const d of ["usr", "dev", "proc", "etc"]) mkdirSync(join(dir, d), { recursive: true });
  mkdirSync(join(dir, "tmp"), { recursive: true });
  chmodSync(join(dir, "tmp"), 0o1777);
  // Debian's merged /usr: /bin, /lib and /lib64 are links into it, which the dynamic loader follows.
  for (const d of ["bin", "sbin", "lib", "lib64"]) symlinkSync(`usr/${d}`, join(dir, d));
  // "localhost" resolves without DNS.
  copyFileSync("/etc/hosts", join(dir, "etc", "hosts"));
}

/** Writes a file into the root as a mounted Secret would, readable by the image's user. */
export function placeFile(root: string, path: string, content: string | Buffer): void {
  const to = join(root, path);
  mkdirSync(dirname(to), { recursive: true });
  rmSync(to, { force: true });
  writeFileSync(to, content, { mode: 0o640 });
  chownSync(to, IMAGE_UID, IMAGE_UID);
}

/** Creates a directory the image's user writes (a volume mounted with fsGroup 65532). */
export function placeVolume(root: string, path: string): string {
  const dir = join(root, path);
  mkdirSync(dir, { recursive: true });
  chownSync(dir, IMAGE_UID, IMAGE_UID);
  return dir;
}

export interface EnterOptions {
  /** The whole environment of the process: nothing of this process's leaks in. */
  env: Record<string, string>;
  /** Host directories bind-mounted read-only at the same path (the base node_modules' targets). */
  binds?: string[];
}

/**
 * Starts `argv` inside the root as the image's user, in a process group of its own (stop it with
 * process.kill(-pid)). argv[0] is looked up in the root's PATH (/usr/bin/node is the host's Node).
 */
export function enterRoot(root: string, argv: string[], opts: EnterOptions): ChildProcess {
  const binds = (opts.binds ?? []).map(b => realpathSync(b));
  return spawn(
    "unshare",
    ["--mount", "--propagation", "private", "sh", "-c", ENTER, "sh", root, ...binds, "--", ...argv],
    {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", ...opts.env },
    },
  );
}

/**
 * Removes the root. Its mounts lived only in the namespaces of processes that have ended, so what is
 * left are plain directories; a root still mounted on the host (never expected) is refused instead.
 */
export function removeRoot(root: string): void {
  const mounted = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .some(line => line.split(" ")[4]?.startsWith(root));
  if (mounted) throw new Error(`${root} still has mounts on this host; not removing it`);
  rmSync(root, { recursive: true, force: true });
}
