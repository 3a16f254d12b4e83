import { LineSplitter } from "./line-splitter";

describe("LineSplitter", () => {
  it("joins a line torn at every possible byte, including inside multi-byte characters", () => {
    const text = '{"a":"héllo ✓ 😀"}\n{"b":2}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new LineSplitter();
      const lines = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))];
      expect(lines).toEqual(['{"a":"héllo ✓ 😀"}', '{"b":2}']);
      expect(s.pending).toBe(0);
    }
  });

  it("keeps an unterminated tail pending and skips blank lines and CR", () => {
    const s = new LineSplitter();
    expect(s.push("\n\r\n{}\r\n{")).toEqual(["{}"]);
    expect(s.pending).toBe(1);
    expect(s.takeRest()).toBe("{");
    expect(s.pending).toBe(0);
  });

  it("does not alias the caller's chunk buffer, which the HTTP layer may reuse", () => {
    const s = new LineSplitter();
    const chunk = Buffer.from('{"a":');
    expect(s.push(chunk)).toEqual([]);
    chunk.fill(0x20);
    expect(s.push("1}\n")).toEqual(['{"a":1}']);
  });

  it("refuses a line that grows past the limit", () => {
    const s = new LineSplitter(8);
    expect(() => s.push("0123456789")).toThrow(/longer than 8 bytes/);
  });
});
