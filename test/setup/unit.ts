// Unit tests should stay quiet unless a developer asks for logs.
process.env.KRPLY_LOG_LEVEL ??= "silent";
process.env.LOG_LEVEL ??= "warn";
