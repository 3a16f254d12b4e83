package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// auditPolicy keeps secrets at Metadata before any other rule can log their bodies, drops the apiserver's own
// lease heartbeats and probes so the log stays readable, and records every write with request and response.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets"]
  - level: None
    resources:
      - group: "coordination.k8s.io"
        resources: ["leases"]
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version"]
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: Metadata
`

// ports are kept in state.json so a restart on the same data dir serves the same URL, and etcd's stored member
// peer URL keeps matching.
type ports struct {
	APIServer int `json:"apiserverPort"`
	Etcd      int `json:"etcdPort"`
	EtcdPeer  int `json:"etcdPeerPort"`
	Control   int `json:"controlPort"`
	// Egress is the CONNECT proxy that kube-apiserver's `cluster` egress goes through (egress.go).
	Egress int `json:"egressProxyPort"`
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(p int) bool {
	if p <= 0 {
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// loadPorts reuses the ports of the previous run when they are still free and picks fresh ones otherwise.
func loadPorts(dataDir string) (ports, error) {
	path := filepath.Join(dataDir, "state.json")
	var p ports
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return p, err
	}
	taken := map[int]bool{}
	for _, slot := range []*int{&p.APIServer, &p.Etcd, &p.EtcdPeer, &p.Control, &p.Egress} {
		if !portFree(*slot) || taken[*slot] {
			for {
				n, err := freePort()
				if err != nil {
					return p, err
				}
				if !taken[n] {
					*slot = n
					break
				}
			}
		}
		taken[*slot] = true
	}
	data, _ := json.MarshalIndent(p, "", "  ")
	return p, writeFileAtomic(path, data, 0o644)
}

// writeKubeconfig embeds the CA so the file keeps working when copied elsewhere.
func writeKubeconfig(path, server string, caPEM []byte, user, token string) error {
	ca := base64.StdEncoding.EncodeToString(caPEM)
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: krply-apiserver
    cluster:
      server: %s
      certificate-authority-data: %s
users:
  - name: %s
    user:
      token: %s
contexts:
  - name: krply-%s
    context:
      cluster: krply-apiserver
      user: %s
      namespace: default
current-context: krply-%s
`, server, ca, user, token, user, user, user)
	return writeFileAtomic(path, []byte(body), 0o600)
}

// apiserverArgs are the kube-apiserver flags; extra flags come last so callers can override any of them.
func apiserverArgs(dataDir string, p ports, pk pkiPaths, tokenFile, auditPolicyPath, auditLog, egressConfig string, extra []string) []string {
	args := []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(p.Etcd),
		// The harness owns compaction (POST /compact), so an exact-RV LIST stays answerable until a test says so.
		"--etcd-compaction-interval=0",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer),
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dataDir, "pki"),
		"--tls-cert-file=" + pk.servingCert,
		"--tls-private-key-file=" + pk.servingKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pk.saKey,
		"--service-account-signing-key-file=" + pk.saKey,
		"--authorization-mode=RBAC",
		"--token-auth-file=" + tokenFile,
		// No controller-manager creates the default ServiceAccount, so this plugin would reject every Pod.
		"--disable-admission-plugins=ServiceAccount",
		"--audit-policy-file=" + auditPolicyPath,
		"--audit-log-path=" + auditLog,
		"--audit-log-format=json",
		// Blocking mode writes each event before the response returns, so tests can read it right away.
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
		// ConfigMap watches go straight to etcd, so a watch from a compacted RV gets a deterministic 410.
		"--watch-cache-sizes=configmaps#0",
		"--profiling=false",
		// Webhooks, CRD conversion and aggregated APIs that name a Service dial through the harness's proxy,
		// which maps registered Services to local ports and refuses the rest, so no call leaves loopback.
		"--egress-selector-config-file=" + egressConfig,
	}
	return append(args, extra...)
}
