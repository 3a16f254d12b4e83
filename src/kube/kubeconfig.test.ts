import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKubeConfig } from "./client";
import { KubeConfigFile, TOKEN_FILE_TTL_MS } from "./kubeconfig";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "krply-kubeconfig-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (s: string) => Buffer.from(s).toString("base64");

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe("KubeConfigFile", () => {
  it("reads clusters, users and contexts; relative paths are relative to the file", () => {
    mkdirSync(join(dir, "pki"));
    writeFileSync(join(dir, "pki", "ca.crt"), "CA FROM FILE");
    const file = write(
      "config",
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: c1",
        "  cluster: {server: 'https://h:6443', certificate-authority: pki/ca.crt, tls-server-name: api}",
        "- name: c2",
        `  cluster: {server: 'https://other:1', certificate-authority-data: ${b64("CA DATA")}, insecure-skip-tls-verify: true}`,
        "users:",
        "- name: u1",
        `  user: {client-certificate-data: ${b64("CERT")}, client-key-data: ${b64("KEY")}}`,
        "- name: u2",
        "  user: {token: secret-token}",
        "contexts:",
        "- name: a",
        "  context: {cluster: c1, user: u1, namespace: shop}",
        "- name: b",
        "  context: {cluster: c2, user: u2}",
        "current-context: a",
      ].join("\n"),
    );
    const kc = loadKubeConfig({ kubeconfig: file });
    expect(kc.getCurrentCluster()?.server).toBe("https://h:6443");
    expect(kc.currentContextEntry()?.namespace).toBe("shop");
    const tls = kc.tls();
    expect(String(tls.ca)).toBe("CA FROM FILE");
    expect(String(tls.cert)).toBe("CERT");
    expect(String(tls.key)).toBe("KEY");
    expect(tls.servername).toBe("api");
    expect(tls.rejectUnauthorized).toBeUndefined();
    expect(kc.authHeaders()).toEqual({});

    const other = loadKubeConfig({ kubeconfig: file, context: "b" });
    expect(String(other.tls().ca)).toBe("CA DATA");
    expect(other.tls().rejectUnauthorized).toBe(false);
    expect(other.authHeaders()).toEqual({ Authorization: "Bearer secret-token" });
    expect(() => loadKubeConfig({ kubeconfig: file, context: "nope" })).toThrow(/not found/);
  });

  it("merges files as kubectl does: the first to name an entry or a current context wins", () => {
    const one = write(
      "one",
      "clusters:\n- name: c\n  cluster: {server: 'https://first:1'}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
    );
    const two = write(
      "two",
      "clusters:\n- name: c\n  cluster: {server: 'https://second:1'}\n- name: d\n  cluster: {server: 'https://d:1'}\ncontexts:\n- name: y\n  context: {cluster: d}\ncurrent-context: y\n",
    );
    const kc = KubeConfigFile.fromDefault({ KUBECONFIG: `${one}:${two}` });
    expect(kc.currentContext).toBe("y");
    expect(kc.getCurrentCluster()?.server).toBe("https://d:1");
    kc.setCurrentContext("x");
    expect(kc.getCurrentCluster()?.server).toBe("https://first:1");
  });

  it("re-reads a token file once it is older than the TTL (rotated service account tokens)", () => {
    const token = write("token", "first\n");
    const file = write(
      "config",
      `clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\nusers:\n- name: u\n  user: {tokenFile: ${token}}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
    );
    const kc = KubeConfigFile.fromFiles([file]);
    expect(kc.authHeaders(1000)).toEqual({ Authorization: "Bearer first" });
    writeFileSync(token, "second\n");
    expect(kc.authHeaders(1000 + TOKEN_FILE_TTL_MS)).toEqual({ Authorization: "Bearer first" });
    expect(kc.authHeaders(1001 + TOKEN_FILE_TTL_MS)).toEqual({ Authorization: "Bearer second" });
  });

  it("uses the pod's service account in the cluster", () => {
    writeFileSync(join(dir, "token"), "sa-token");
    writeFileSync(join(dir, "ca.crt"), "SA CA");
    writeFileSync(join(dir, "namespace"), "krply\n");
    const kc = KubeConfigFile.inCluster(
      { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
      dir,
    );
    expect(kc.getCurrentCluster()?.server).toBe("https://[fd00::1]:443");
    expect(kc.currentContextEntry()?.namespace).toBe("krply");
    expect(String(kc.tls().ca)).toBe("SA CA");
    expect(kc.authHeaders()).toEqual({ Authorization: "Bearer sa-token" });
  });

  it("hands exec plugins and auth providers to client-node, and basic auth is a header", () => {
    const file = write(
      "config",
      "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\nusers:\n- name: e\n  user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}\n- name: b\n  user: {username: ann, password: pw}\ncontexts:\n- name: e\n  context: {cluster: c, user: e}\n- name: b\n  context: {cluster: c, user: b}\ncurrent-context: e\n",
    );
    const kc = KubeConfigFile.fromFiles([file]);
    expect(kc.getCurrentUser()?.delegated).toBe(true);
    const doc = kc.currentAsDocument() as { users: { user: { exec: { command: string } } }[] };
    expect(doc.users[0].user.exec.command).toBe("aws");
    kc.setCurrentContext("b");
    expect(kc.getCurrentUser()?.delegated).toBe(false);
    expect(kc.authHeaders()).toEqual({ Authorization: `Basic ${b64("ann:pw")}` });
  });

  it("never quotes a kubeconfig it cannot read: the file holds credentials", () => {
    const file = write("config", "users:\n- name: u\n  user: {token: hunter2-secret\n");
    expect(() => KubeConfigFile.fromFiles([file])).toThrow(/cannot read kubeconfig/);
    try {
      KubeConfigFile.fromFiles([file]);
    } catch (err) {
      expect(String((err as Error).message)).not.toContain("hunter2");
    }
    const bad = write("bad", "clusters:\n- name: c\n  cluster: {server: 42}\n");
    expect(() => KubeConfigFile.fromFiles([bad])).toThrow(/not valid at clusters.0.cluster.server/);
  });
});
