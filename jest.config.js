// ESM-only packages (kubernetes-fluent-client, client-node and their deps) must be transformed for Jest.
const esmPackages = [
  "kubernetes-fluent-client",
  "@kubernetes/client-node",
  "openid-client",
  "oauth4webapi",
  "jose",
  "undici",
  "hpagent",
  "isomorphic-ws",
  "stream-buffers",
  "rfc4648",
  "jsonpath-plus",
  "js-yaml",
  "tar-fs",
  "yaml",
];

// The journal opens idle journals by SQLite URI (immutable=1). better-sqlite3 reads this variable when
// its addon loads, from the real environment, which Jest's sandboxed process.env does not reach; set
// here, every worker inherits it.
process.env.SQLITE_USE_URI = "1";

const base = {
  testEnvironment: "node",
  transform: {
    "^.+\\.[tj]sx?$": [
      "ts-jest",
      {
        tsconfig: {
          allowJs: true,
          module: "commonjs",
          esModuleInterop: true,
          resolveJsonModule: true,
          strict: true,
          skipLibCheck: true,
          target: "ES2022",
        },
        diagnostics: false,
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join("|")})/)`],
  moduleFileExtensions: ["ts", "js", "json", "node"],
  modulePathIgnorePatterns: ["<rootDir>/dist/", "<rootDir>/.cache/"],
};

// One real API server per run, shared by the integration and e2e projects (test/apiserver).
const apiServer = {
  globalSetup: "<rootDir>/test/apiserver/global-setup.ts",
  globalTeardown: "<rootDir>/test/apiserver/global-teardown.ts",
};

module.exports = {
  projects: [
    {
      ...base,
      displayName: "unit",
      testMatch: ["<rootDir>/{src,capabilities,web,deploy,scripts,test/unit}/**/*.test.ts"],
      setupFiles: ["<rootDir>/test/setup/unit.ts"],
    },
    {
      ...base,
      displayName: "integration",
      testMatch: ["<rootDir>/test/integration/**/*.test.ts"],
      setupFiles: ["<rootDir>/test/setup/integration.ts"],
      // testTimeout is a global-only option, so each project sets its timeout in a setup file.
      setupFilesAfterEnv: ["<rootDir>/test/setup/timeout-integration.ts"],
      ...apiServer,
    },
    {
      ...base,
      displayName: "e2e",
      testMatch: ["<rootDir>/test/e2e/**/*.test.ts"],
      setupFiles: ["<rootDir>/test/setup/e2e.ts"],
      setupFilesAfterEnv: ["<rootDir>/test/setup/timeout-e2e.ts"],
      ...apiServer,
    },
  ],
};
