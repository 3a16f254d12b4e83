import { answer, type Answer } from "../../materialize";
import { readAllPages } from "./pages";

const page = (data: number[], complete = true): Answer<number[]> =>
  answer(data, { complete, gaps: [], downWindows: [], unrecorded: [], prunedBefore: null }, []);

describe("readAllPages", () => {
  it("reads from the first page to the one with no next, in order, and joins them", async () => {
    const asked: (string | undefined)[] = [];
    const pages: Record<string, { answer: Answer<number[]>; next: string | null }> = {
      first: { answer: page([1, 2]), next: "b" },
      b: { answer: page([3], false), next: "c" },
      c: { answer: page([]), next: null },
    };
    const joined = await readAllPages<number, string>(async after => {
      asked.push(after);
      return pages[after ?? "first"];
    });
    expect(asked).toEqual([undefined, "b", "c"]);
    expect(joined.data).toEqual([1, 2, 3]);
    expect(joined.coverage.complete).toBe(false);
  });

  it("takes a page read that answers at once", async () => {
    expect(
      (await readAllPages<number, number>(() => ({ answer: page([7]), next: null }))).data,
    ).toEqual([7]);
  });
});
