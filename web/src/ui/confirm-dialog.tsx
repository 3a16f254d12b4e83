// An explicit confirmation before a write to the cluster (dry run, apply). Focus starts on Cancel,
// Tab stays inside the dialog, Escape cancels, and focus returns to the button that opened it.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function ConfirmDialog({
  title,
  confirmLabel,
  danger,
  busy,
  onConfirm,
  onCancel,
  children,
}: {
  title: string;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const box = useRef<HTMLDivElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    cancel.current?.focus();
    return () => opener?.focus();
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onCancel();
      return;
    }
    if (e.key !== "Tab" || !box.current) return;
    const items = [
      ...box.current.querySelectorAll<HTMLElement>(
        "button:not([disabled]), input:not([disabled]), a[href]",
      ),
    ];
    if (items.length === 0) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <div class="overlay">
      <div
        ref={box}
        class="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="confirm-title"
        data-testid="confirm-dialog"
        onKeyDown={onKeyDown}
      >
        <h2 id="confirm-title">{title}</h2>
        {children}
        <div class="actions">
          <button ref={cancel} type="button" class="secondary" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="button" class={danger ? "danger" : ""} onClick={onConfirm} disabled={busy}>
            {busy ? "Working…" : confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
