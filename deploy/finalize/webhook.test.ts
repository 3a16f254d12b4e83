import { PLAN_LABEL, validatingWebhooks, webhookBaseOf } from "./webhook";

const base = {
  name: "pepr-krply",
  caBundle: "Q0E=",
  path: "/validate/abc10def",
  serviceName: "pepr-krply",
  namespace: "pepr-system",
  timeoutSeconds: 15,
  ignoredNamespaces: ["flux-system"],
};

describe("the replay gate's webhooks", () => {
  const [labelled, plans] = validatingWebhooks(base) as Record<string, unknown>[];

  // Decision D5: krply being down must fail replay writes and nothing else.
  it("sees every API group, but only objects that carry the plan label", () => {
    expect(labelled.objectSelector).toEqual({
      matchExpressions: [{ key: PLAN_LABEL, operator: "Exists" }],
    });
    expect(labelled.rules).toEqual([
      expect.objectContaining({
        apiGroups: ["*"],
        resources: ["*"],
        operations: ["CREATE", "UPDATE"],
      }),
    ]);
    expect(labelled.failurePolicy).toBe("Fail");
  });

  it("sees ReplayPlans alone in the second webhook", () => {
    expect(plans.rules).toEqual([
      expect.objectContaining({ apiGroups: ["krply.dev"], resources: ["replayplans"] }),
    ]);
    expect(plans.objectSelector).toBeUndefined();
  });

  it("keeps the generated path whatever the timeout (Pepr rewrites a 10 inside it)", () => {
    for (const hook of [labelled, plans]) {
      expect(hook.clientConfig).toEqual({
        caBundle: "Q0E=",
        service: { name: "pepr-krply", namespace: "pepr-system", path: "/validate/abc10def" },
      });
      expect(hook.timeoutSeconds).toBe(15);
    }
  });

  it("reads CA, path and Service from a generated configuration, and says when it cannot", () => {
    const generated = {
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "pepr-krply" },
      webhooks: [
        { clientConfig: { caBundle: "Q0E=", service: { name: "pepr-krply", path: "/v" } } },
      ],
    };
    expect(webhookBaseOf(generated, 10, [])).toMatchObject({
      path: "/v",
      namespace: "pepr-system",
    });
    expect(() =>
      webhookBaseOf({ kind: "ValidatingWebhookConfiguration", metadata: {} }, 10, []),
    ).toThrow(/not what finalize expects/);
  });
});
