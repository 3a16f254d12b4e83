// Moving between states is writing the hash; the app re-renders from it.
export function go(href: string): void {
  if (location.hash !== href) location.hash = href;
}

/** The values of a form's named fields, for turning a submitted form into URL parameters. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form)) if (typeof v === "string") out[k] = v.trim();
  return out;
}
