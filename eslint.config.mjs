import { existsSync, readdirSync } from "node:fs";
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

// Every folder of src/ with an index.ts is entered only through it: reaching past the front door
// (e.g. "../journal/types") fails the lint. The list is read from disk, so a new folder with an
// index.ts is guarded from the moment it has one.
const fronts = readdirSync(new URL("./src", import.meta.url), { withFileTypes: true })
  .filter(d => d.isDirectory() && existsSync(new URL(`./src/${d.name}/index.ts`, import.meta.url)))
  .map(d => d.name)
  .sort();

function boundaries(except) {
  const patterns = fronts
    .filter(f => f !== except)
    .map(f => ({
      group: [`**/${f}/*`, `!**/fixtures/${f}/*`],
      message: `import src/${f} through its index.ts ("…/${f}"), not a file inside it`,
    }));
  return { "no-restricted-imports": ["error", { patterns }] };
}

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      ".cache/",
      "coverage/",
      "web/dist/",
      "**/*.js",
      "**/*.mjs",
      // Code that breaks the rules on purpose, linted by test/unit/lint-boundaries.test.ts.
      "test/fixtures/lint/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "no-empty": ["error", { allowEmptyCatch: false }],
    },
  },
  // The web UI (web/src) runs in the browser: DOM globals, TSX with preact, its own tsconfig (web/).
  {
    files: ["web/src/**/*.ts", "web/src/**/*.tsx"],
    languageOptions: {
      globals: { ...globals.browser, ...globals.jest },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "no-empty": ["error", { allowEmptyCatch: false }],
    },
  },
  { files: ["**/*.ts"], rules: boundaries(null) },
  // Inside a front folder its own files are fair game; the other folders' doors still apply.
  ...fronts.map(f => ({ files: [`src/${f}/**/*.ts`], rules: boundaries(f) })),
);
