// Real API-server round trips on a shared 2-core machine need minutes, not the 5 s default.
jest.setTimeout(120_000);
