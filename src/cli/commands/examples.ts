/** The Examples section of a command's --help: the command line and what it does. */
export function examples(lines: [command: string, what: string][]): string {
  const width = Math.max(...lines.map(([c]) => c.length));
  return `\nExamples:\n${lines.map(([c, w]) => `  ${c.padEnd(width)}  ${w}`).join("\n")}\n`;
}
