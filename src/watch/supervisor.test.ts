import { resumePointOf } from "./supervisor";

describe("resumePointOf", () => {
  const info = {
    streamId: "s",
    key: {
      clusterId: "c",
      group: "",
      version: "v1",
      resource: "pods",
      namespace: "",
      selector: "",
    },
    lastResourceVersion: "42",
    lastObservedAt: null,
    baselinePresent: true,
    openGaps: 0,
    state: "active" as const,
  };

  it("resumes from the durable checkpoint, and relists only without a baseline or with an open gap", () => {
    expect(resumePointOf(undefined)).toEqual({ rv: null, needList: true, coverage: "unknown" });
    expect(resumePointOf(info)).toEqual({ rv: "42", needList: false, coverage: "unknown" });
    expect(resumePointOf({ ...info, openGaps: 1 }).needList).toBe(true);
    expect(resumePointOf({ ...info, baselinePresent: false }).needList).toBe(true);
    expect(resumePointOf({ ...info, lastResourceVersion: null }).needList).toBe(true);
    expect(resumePointOf({ ...info, state: "unavailable" }).coverage).toBe("unavailable");
  });
});
