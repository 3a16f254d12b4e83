import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type Database from "better-sqlite3";
import { logger } from "../../log/logger";
import { JournalError } from "../types";

const log = logger("journal");

/**
 * Two recorders must never write one journal: each would diff against its own idea of the newest
 * version, and every change would be recorded twice. The Deployment's Recreate strategy keeps them
 * apart in a cluster; the lease makes the rule hold everywhere (a second `krply record`, a rollout
 * with another strategy, a pod that a node lost track of). It is a row in the journal's meta table,
 * taken and renewed by the recorder's own writer, and released when the recorder closes.
 */
export interface RecorderLeaseOptions {
  /** How long a holder that stopped renewing keeps the lease (default 30 s). */
  ttlMs?: number;
  /** Who asks; defaults to this host and process. */
  host?: string;
  pid?: number;
  /** Whether a process of this host is alive (default: signal 0). */
  isAlive?: (pid: number) => boolean;
  now?: () => number;
}

export interface LeaseHolder {
  host: string;
  pid: number;
  instance: string;
  since: number;
  heartbeat: number;
}

export type LeaseDecision = { take: true; why: string } | { take: false; why: string };

export const LEASE_KEY = "recorder_lease";
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** Leases this process holds now, by instance. */
const HELD_HERE = new Set<string>();

/**
 * Whether `me` may take the lease from its current holder. A holder on another host keeps it until
 * its heartbeat is older than the TTL. On this host, a dead process gives it up at once. A holder with
 * our own pid is either a recorder of this process that is still open (refused), or an earlier life
 * of this pid (a restarted container runs as pid 1 again), which is gone.
 */
export function leaseDecision(
  current: LeaseHolder | null,
  me: Pick<LeaseHolder, "host" | "pid" | "instance">,
  now: number,
  ttlMs: number,
  isAlive: (pid: number) => boolean,
  heldHere: (instance: string) => boolean = instance => HELD_HERE.has(instance),
): LeaseDecision {
  if (!current) return { take: true, why: "free" };
  if (current.instance === me.instance) return { take: true, why: "ours" };
  const age = now - current.heartbeat;
  if (age > ttlMs)
    return { take: true, why: `its holder stopped renewing ${Math.round(age / 1000)} s ago` };
  if (current.host === me.host) {
    const gone = current.pid === me.pid ? !heldHere(current.instance) : !isAlive(current.pid);
    if (gone) return { take: true, why: `its holder (pid ${current.pid}) is no longer running` };
  }
  return {
    take: false,
    why:
      `another recorder (${current.host}, pid ${current.pid}) is writing this journal, ` +
      `last heard from ${Math.max(0, Math.round(age / 1000))} s ago; two recorders never write one journal. ` +
      `Stop the other one, or wait ${Math.ceil((ttlMs - age) / 1000)} s if it is gone`,
  };
}

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

function parseHolder(text: string | undefined): LeaseHolder | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<LeaseHolder>;
    if (typeof v.instance !== "string" || typeof v.heartbeat !== "number") return null;
    return {
      host: String(v.host),
      pid: Number(v.pid),
      instance: v.instance,
      since: Number(v.since),
      heartbeat: v.heartbeat,
    };
  } catch (err) {
    // A lease row nobody can read protects nothing: treat the lease as free, and say so.
    log.warn(
      { err: (err as Error).name },
      "unreadable recorder lease in the journal; replacing it",
    );
    return null;
  }
}

/** The recorder's hold on a journal: acquire once, renew while writing, release on close. */
export class RecorderLease {
  private readonly me: LeaseHolder;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private lastRenew = 0;
  private lost = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly opts: RecorderLeaseOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    const t = this.now();
    this.me = {
      host: opts.host ?? hostname(),
      pid: opts.pid ?? process.pid,
      instance: randomUUID(),
      since: t,
      heartbeat: t,
    };
  }

  private read(): LeaseHolder | null {
    const row = this.db.prepare("SELECT value FROM meta WHERE key=?").get(LEASE_KEY) as
      | { value: string }
      | undefined;
    return parseHolder(row?.value);
  }

  private write(heartbeat: number): void {
    this.db
      .prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
      .run(LEASE_KEY, JSON.stringify({ ...this.me, heartbeat }));
    this.lastRenew = heartbeat;
  }

  /** Takes the lease or throws LEASED with who holds it; renews it in the background until release. */
  acquire(): void {
    const decision = this.db
      .transaction(() => {
        const d = leaseDecision(
          this.read(),
          this.me,
          this.now(),
          this.ttlMs,
          this.opts.isAlive ?? processAlive,
        );
        if (d.take) this.write(this.now());
        return d;
      })
      .immediate();
    if (!decision.take) throw new JournalError(`${this.path}: ${decision.why}`, "LEASED");
    HELD_HERE.add(this.me.instance);
    if (decision.why !== "free" && decision.why !== "ours") {
      log.warn({ path: this.path, why: decision.why }, "took over the journal's recorder lease");
    }
    this.timer = setInterval(() => this.renewQuietly(), Math.max(1_000, this.ttlMs / 3));
    this.timer.unref();
  }

  /**
   * Renews inside the caller's write transaction when a third of the TTL has passed. A lease that
   * someone else took meanwhile (this process stalled past the TTL) fails the write with LEASED, so
   * the two recorders never both append.
   */
  renewInTransaction(): void {
    if (this.lost) throw this.lostError();
    const t = this.now();
    if (t - this.lastRenew < this.ttlMs / 3) return;
    const current = this.read();
    if (current?.instance !== this.me.instance) {
      this.lost = true;
      throw this.lostError();
    }
    this.write(t);
  }

  /**
   * renewInTransaction for a batch that commits on the writer thread: throws LEASED once lost, and
   * when a renewal is due hands it to `renew`, which the thread runs inside the batch only while
   * this process still holds the lease (else the batch fails with LEASED).
   */
  renewVia(renew: (key: string, instance: string, valueJson: string) => void): void {
    if (this.lost) throw this.lostError();
    const t = this.now();
    if (t - this.lastRenew < this.ttlMs / 3) return;
    renew(LEASE_KEY, this.me.instance, JSON.stringify({ ...this.me, heartbeat: t }));
    this.lastRenew = t;
  }

  private renewQuietly(): void {
    try {
      this.db.transaction(() => this.renewInTransaction()).immediate();
    } catch (err) {
      if (this.lost) {
        log.error(
          { path: this.path },
          "the journal's recorder lease was taken by another recorder",
        );
        this.stopTimer();
      } else {
        // Busy or I/O: the next append or the next tick renews; the TTL leaves room for both.
        log.warn({ err, path: this.path }, "could not renew the recorder lease; retrying");
      }
    }
  }

  private lostError(): JournalError {
    return new JournalError(
      `${this.path}: another recorder took this journal's lease while this one was stalled; stop writing`,
      "LEASED",
    );
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    HELD_HERE.delete(this.me.instance);
  }

  /** Gives the lease up, so the next recorder starts at once instead of waiting out the TTL. */
  release(): void {
    this.stopTimer();
    if (this.lost) return;
    try {
      this.db
        .prepare("DELETE FROM meta WHERE key=? AND json_extract(value, '$.instance')=?")
        .run(LEASE_KEY, this.me.instance);
    } catch (err) {
      log.warn(
        { err, path: this.path },
        "could not release the recorder lease; it expires by itself",
      );
    }
  }
}
