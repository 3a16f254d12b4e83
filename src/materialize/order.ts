/**
 * Orders ISO 8601 / RFC 3339 UTC times, whose text order is their time order. A plain comparison,
 * not localeCompare: the first localeCompare of a process loads ICU's collator, some 40 ms of every
 * CLI read (docs/benchmarks.md, CLI start-up), and a time needs no locale.
 */
export const compareTimes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
