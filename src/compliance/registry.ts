import type { Control, ControlImplementation } from "./types";

/**
 * Registers controls under their ids and hands back the same record, typed, so a mapping names a
 * control by a checked key (`CONTROLS.RBAC_RECORDER`) rather than by a string that could drift.
 */
export function registerControls<K extends string>(
  controls: Record<K, Omit<Control, "id"> & { id: string }>,
): Readonly<Record<K, Control>> {
  const seen = new Set<string>();
  for (const c of Object.values<Control>(controls)) {
    if (seen.has(c.id)) throw new Error(`control ${c.id} is registered twice`);
    seen.add(c.id);
  }
  return Object.freeze({ ...controls });
}

/** Maps a registered control to the code and tests that implement it. */
export function mapControl(
  control: Control,
  impl: Omit<ControlImplementation, "control" | "coverage"> & { coverage?: number },
): ControlImplementation {
  const coverage = impl.coverage ?? 100;
  if (!(coverage > 0 && coverage <= 100)) {
    throw new Error(`control ${control.id}: coverage ${coverage} is not in (0, 100]`);
  }
  return { ...impl, control: control.id, coverage };
}
