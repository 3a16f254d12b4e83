// What an answer covers, shown above every historical view: complete or not, its gaps, recorder down
// windows, unrecorded streams, the prune horizon and the warnings. Partial history is never presented
// as complete.
import type { Answer } from "../api-client";

export function CoverageBanner({
  answer,
  label = "Coverage of this answer",
}: {
  answer: Pick<Answer<unknown>, "coverage" | "warnings">;
  label?: string;
}) {
  const c = answer.coverage;
  const complete = c.complete;
  return (
    <section
      class={`coverage-banner ${complete ? "complete" : "partial"}`}
      data-testid="coverage-banner"
      data-complete={String(complete)}
      aria-label={label}
    >
      <p class="coverage-headline">
        {complete ? (
          <>
            <span class="badge ok">Complete</span> Every stream this answer rests on was recorded
            without a gap.
          </>
        ) : (
          <>
            <span class="badge bad">Incomplete</span> Part of this history is unknown; read it with
            the gaps below in mind.
          </>
        )}
      </p>
      {(c.gaps.length > 0 ||
        c.downWindows.length > 0 ||
        c.unrecorded.length > 0 ||
        c.prunedBefore) && (
        <ul class="coverage-list">
          {c.gaps.map(g => (
            <li key={`g${g.streamId}${g.from}`}>
              <strong>Gap</strong> in <code>{g.streamId}</code> from <time>{g.from}</time> to{" "}
              {g.to ? <time>{g.to}</time> : "now (open)"}: {g.reason}
            </li>
          ))}
          {c.downWindows.map(d => (
            <li key={`d${d.streamId}${d.from}`}>
              <strong>Recorder down</strong> for <code>{d.streamId}</code> from{" "}
              <time>{d.from}</time> to <time>{d.to}</time>: changes in it were observed late
            </li>
          ))}
          {c.unrecorded.map(u => (
            <li key={`u${u.streamId}`}>
              <strong>Not recorded</strong>: <code>{u.streamId}</code> ({u.state}: {u.reason})
            </li>
          ))}
          {c.prunedBefore && (
            <li>
              <strong>Pruned</strong>: history before <time>{c.prunedBefore}</time> was removed by
              retention
            </li>
          )}
        </ul>
      )}
      {answer.warnings.length > 0 && (
        <details class="warnings" open={!complete}>
          <summary>
            {answer.warnings.length} warning{answer.warnings.length === 1 ? "" : "s"}
          </summary>
          <ul>
            {answer.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
