// Integration tests log warnings so failures against the real API server carry context.
process.env.KRPLY_LOG_LEVEL ??= "warn";
