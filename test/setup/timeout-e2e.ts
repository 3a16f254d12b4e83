// End-to-end runs build the module and drive whole workflows.
jest.setTimeout(300_000);
