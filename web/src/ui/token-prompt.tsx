// Asked for when the sidecar answers 401: the token is kept in sessionStorage (gone with the tab) and
// sent only as Authorization: Bearer. It is a dialog in the page, not window.prompt, so it has a label,
// takes focus and can be cancelled.
import { useEffect, useRef, useState } from "preact/hooks";

export function TokenPrompt({
  message,
  onToken,
  onCancel,
}: {
  message: string;
  onToken: (token: string) => void;
  onCancel: () => void;
}) {
  const [value, setValue] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <div class="overlay">
      <div
        class="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="token-title"
        data-testid="token-prompt"
        onKeyDown={e => {
          if (e.key === "Escape") onCancel();
        }}
      >
        <h2 id="token-title">Token required</h2>
        <p>
          The krply sidecar asks for a Kubernetes bearer token ({message}). It is kept in this tab's
          session storage only.
        </p>
        <form
          onSubmit={e => {
            e.preventDefault();
            const t = value.trim();
            if (t) onToken(t);
          }}
        >
          <label for="token-input">Bearer token</label>
          <input
            id="token-input"
            ref={input}
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={value}
            onInput={e => setValue((e.target as HTMLInputElement).value)}
          />
          <div class="actions">
            <button type="submit" disabled={value.trim() === ""}>
              Use token
            </button>
            <button type="button" class="secondary" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
