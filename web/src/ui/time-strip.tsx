// A stream's time strip: a bar from the strip's start to its end with a marker where each gap, down
// window or pruned stretch is. Each marker is focusable and names its window, so keyboard and screen
// reader users find the same gaps sighted users see.
import type { Marker, Range } from "../time-strip";

export function TimeStrip({
  markers,
  range,
  label,
  stream,
}: {
  markers: Marker[];
  range: Range;
  label: string;
  stream: string;
}) {
  const from = new Date(range.fromMs).toISOString();
  const to = new Date(range.toMs).toISOString();
  return (
    <div class="strip" role="group" aria-label={`${label}: ${from} to ${to}`}>
      {markers.length === 0 && <span class="visually-hidden">no gaps or down windows</span>}
      {markers.map(m => (
        <span
          key={`${m.kind}${m.from}`}
          class={`marker ${m.kind}`}
          data-testid={`${m.kind}-marker`}
          data-stream={stream}
          data-from={m.from}
          data-to={m.to ?? ""}
          style={{ left: `${m.left}%`, width: `${m.width}%` }}
          tabIndex={0}
          role="img"
          aria-label={m.label}
          title={m.label}
        />
      ))}
    </div>
  );
}
