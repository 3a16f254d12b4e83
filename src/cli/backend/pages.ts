// Both backends read a paged answer the same way, page by page as the sidecar serves it, so local
// and remote mode join the same pages into the same output.
import { joinPages, type Answer } from "../../materialize";

/** One page: its part of the answer, and where the next starts (null on the last). */
export interface PageRead<T, C> {
  answer: Answer<T[]>;
  next: C | null;
}

/** Reads pages from the first until one has no next, and joins them into one answer. */
export async function readAllPages<T, C>(
  read: (after: C | undefined) => PageRead<T, C> | Promise<PageRead<T, C>>,
): Promise<Answer<T[]>> {
  const pages: Answer<T[]>[] = [];
  let after: C | undefined;
  do {
    const { answer, next } = await read(after);
    pages.push(answer);
    after = next ?? undefined;
  } while (after !== undefined);
  return joinPages(pages);
}
