/**
 * Parses JSON from the wire without letting the input into an error. Node's JSON.parse messages quote
 * the text around the fault, and an answer or a watch line can carry a Secret's values, so the error
 * names only what the caller calls the text and its length.
 */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SyntaxError(`${what} is not valid JSON (${Buffer.byteLength(text)} bytes)`);
  }
}
