import type { CodeRef, ControlImplementation, TestRef } from "./types";

/** Reads a file of the source tree by its repository-relative path; null when it does not exist. */
export type SourceReader = (file: string) => string | null;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** True when the text exports the symbol by declaration or in an export list. */
export function exportsSymbol(text: string, symbol: string): boolean {
  const name = escape(symbol);
  const declared = new RegExp(
    `^export\\s+(?:declare\\s+)?(?:async\\s+)?(?:function\\*?|const|let|class|interface|type|enum)\\s+${name}\\b`,
    "m",
  );
  const listed = new RegExp(`^export\\s*(?:type\\s*)?\\{[^}]*\\b${name}\\b[^}]*\\}`, "m");
  return declared.test(text) || listed.test(text);
}

/** True when the text declares a test whose name is exactly, or (for it.each) contains, the given name. */
export function declaresTest(text: string, name: string): boolean {
  const quoted = [`"${name}"`, `'${name}'`, `\`${name}\``];
  if (quoted.some(q => text.includes(q))) return true;
  // it.each names carry a %s placeholder before the fixed part.
  return new RegExp(`["'\`]%s ${escape(name)}["'\`]`).test(text);
}

function checkCode(ref: CodeRef, read: SourceReader): string | null {
  const text = read(ref.file);
  if (text === null) return `${ref.file} does not exist`;
  return exportsSymbol(text, ref.symbol) ? null : `${ref.file} does not export ${ref.symbol}`;
}

function checkTest(ref: TestRef, read: SourceReader): string | null {
  const text = read(ref.file);
  if (text === null) return `${ref.file} does not exist`;
  return declaresTest(text, ref.name) ? null : `${ref.file} has no test named "${ref.name}"`;
}

/**
 * Resolves every code and test reference against the source tree. What it returns is each
 * reference that no longer points at anything, prefixed with the control that depends on it.
 */
export function unresolvedReferences(
  implementations: readonly ControlImplementation[],
  read: SourceReader,
): string[] {
  const problems: string[] = [];
  for (const impl of implementations) {
    for (const ref of impl.code) {
      const p = checkCode(ref, read);
      if (p) problems.push(`${impl.control}: ${p}`);
    }
    for (const ref of impl.tests) {
      const p = checkTest(ref, read);
      if (p) problems.push(`${impl.control}: ${p}`);
    }
  }
  return problems;
}

/** Control ids written in a document (docs/threat-model.md): KR-<AREA>-<n>. */
export function controlIdsIn(markdown: string): string[] {
  return [...new Set(markdown.match(/\bKR-[A-Z]+-\d+\b/g) ?? [])].sort();
}
