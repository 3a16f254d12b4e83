// Every record's observedAt is checked against its canonical form, because a time in any other
// spelling is kept verbatim in the meta column. Nearly every time arrives in canonical form, and a
// Date.parse plus toISOString round trip is dearer than the rest of a record's bookkeeping.

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(s: string, from: number, len: number): number {
  let v = 0;
  for (let i = from; i < from + len; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

function daysIn(year: number, month: number): number {
  if (month !== 2) return DAYS[month - 1];
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/**
 * Milliseconds of a time written exactly as Date.prototype.toISOString writes it
 * ("2024-01-01T00:00:00.000Z"), or null when s is in any other form (the caller then parses it).
 */
export function canonicalIsoMs(s: string): number | null {
  if (
    s.length !== 24 ||
    s.charCodeAt(4) !== 45 || // -
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 || // T
    s.charCodeAt(13) !== 58 || // :
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(19) !== 46 || // .
    s.charCodeAt(23) !== 90 // Z
  )
    return null;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const sec = digits(s, 17, 2);
  const ms = digits(s, 20, 3);
  // Date.UTC maps years 0-99 to 1900-1999, so those take the slow path.
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return null;
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0) return null;
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms);
}

const DAY_MS = 86_400_000;
// toISOString writes four-digit years only for years 0 through 9999.
const MIN_FAST = new Date("0000-01-01T00:00:00.000Z").getTime();
const MAX_FAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

/**
 * The same string as new Date(ms).toISOString(), built with integer arithmetic: every row read
 * formats its time, and a Date round trip per row is a noticeable share of reading a history.
 */
export function isoFromMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < MIN_FAST || ms > MAX_FAST) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rem = ms - days * DAY_MS;
  // Civil date from a day count (days since 1970-01-01), counting in 400-year eras from March.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const mi = Math.floor(rem / 60_000);
  rem -= mi * 60_000;
  const s = Math.floor(rem / 1000);
  const milli = rem - s * 1000;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(milli, 3)}Z`;
}
