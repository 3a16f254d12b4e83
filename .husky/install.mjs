// Husky is a developer convenience: CI and production installs must never fail because of it.
if (process.env.CI === "true" || process.env.NODE_ENV === "production") process.exit(0);
try {
  const husky = (await import("husky")).default;
  console.log(husky());
} catch (err) {
  console.warn(
    `husky not installed, git hooks skipped: ${err instanceof Error ? err.message : err}`,
  );
}
