// Command krply-apiserver runs embedded etcd and kube-apiserver in one process on 127.0.0.1 for krply's tests.
//
// Usage: krply-apiserver --data-dir DIR [--exit-with-parent] [-- extra kube-apiserver flags]
//
// When the API server is ready and the harness RBAC is applied it prints one JSON line on stdout (see readyInfo)
// and writes the same object to DIR/info.json. Logs go to stderr (apiserver) and DIR/etcd.log (etcd).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

type readyInfo struct {
	Server        string            `json:"server"`
	APIServerPort int               `json:"apiserverPort"`
	EtcdPort      int               `json:"etcdPort"`
	EtcdPeerPort  int               `json:"etcdPeerPort"`
	ControlPort   int               `json:"controlPort"`
	ControlURL    string            `json:"controlUrl"`
	EgressPort    int               `json:"egressProxyPort"`
	CAFile        string            `json:"caFile"`
	Kubeconfigs   map[string]string `json:"kubeconfigs"`
	Tokens        map[string]string `json:"tokens"`
	AuditLogPath  string            `json:"auditLogPath"`
	DataDir       string            `json:"dataDir"`
	PID           int               `json:"pid"`
	StartupMillis int64             `json:"startupMillis"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "krply-apiserver:", err)
		os.Exit(1)
	}
}

func run() error {
	started := time.Now()
	dataDirFlag := flag.String("data-dir", "", "directory for etcd data, certificates, tokens, kubeconfigs and the audit log")
	exitWithParent := flag.Bool("exit-with-parent", false, "stop when the parent process goes away")
	flag.Parse()
	if *dataDirFlag == "" {
		return fmt.Errorf("--data-dir is required")
	}
	dataDir, err := filepath.Abs(*dataDirFlag)
	if err != nil {
		return err
	}
	pkiDir := filepath.Join(dataDir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return err
	}
	pk := newPKIPaths(pkiDir)
	if err := ensurePKI(pk); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	tokens, tokenFile, err := ensureTokens(dataDir)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	p, err := loadPorts(dataDir)
	if err != nil {
		return fmt.Errorf("ports: %w", err)
	}
	policyPath := filepath.Join(dataDir, "audit-policy.yaml")
	if err := writeFileAtomic(policyPath, []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	auditLog := filepath.Join(dataDir, "audit.log")
	egressConfig := filepath.Join(dataDir, "egress-selector.yaml")
	egressYAML := fmt.Sprintf(egressSelectorConfig, p.Egress, pk.caCert, pk.egressCert, pk.egressKey)
	if err := writeFileAtomic(egressConfig, []byte(egressYAML), 0o644); err != nil {
		return err
	}
	egress, err := newEgressProxy(p.Egress, filepath.Join(dataDir, "egress-routes.json"))
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	// Listening before kube-apiserver starts means no webhook call can ever find the proxy missing.
	if err := egress.listen(pk); err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}

	etcdServer, etcdClient, err := startEtcd(dataDir, p)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcdServer.Close()
	defer etcdClient.Close()

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs(dataDir, p, pk, tokenFile, policyPath, auditLog, egressConfig, flag.Args()))
	apiErr := make(chan error, 1)
	go func() { apiErr <- cmd.Execute() }()

	server := "https://127.0.0.1:" + strconv.Itoa(p.APIServer)
	cfg := &rest.Config{
		Host:            server,
		BearerToken:     tokens["admin"],
		TLSClientConfig: rest.TLSClientConfig{CAFile: pk.caCert},
		QPS:             -1,
	}
	if err := waitReady(cfg, apiErr); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err = ensureRBAC(ctx, cs)
	cancel()
	if err != nil {
		return fmt.Errorf("rbac: %w", err)
	}

	egress.setServices(cs)
	ctl := &control{etcd: etcdClient, probe: cs.CoreV1().RESTClient().(*rest.RESTClient)}
	srv, err := ctl.serve(p.Control, func(mux *http.ServeMux) { egress.registerEgress(mux, pk) })
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	defer srv.Close()

	caPEM, err := os.ReadFile(pk.caCert)
	if err != nil {
		return err
	}
	info := readyInfo{
		Server: server, APIServerPort: p.APIServer, EtcdPort: p.Etcd, EtcdPeerPort: p.EtcdPeer,
		ControlPort: p.Control, ControlURL: "http://127.0.0.1:" + strconv.Itoa(p.Control), EgressPort: p.Egress,
		CAFile: pk.caCert, Kubeconfigs: map[string]string{}, Tokens: tokens,
		AuditLogPath: auditLog, DataDir: dataDir, PID: os.Getpid(),
	}
	for _, u := range users {
		path := filepath.Join(dataDir, "kubeconfig-"+u.name+".yaml")
		if err := writeKubeconfig(path, server, caPEM, u.name, tokens[u.name]); err != nil {
			return err
		}
		info.Kubeconfigs[u.name] = path
	}
	info.StartupMillis = time.Since(started).Milliseconds()
	line, _ := json.Marshal(info)
	if err := writeFileAtomic(filepath.Join(dataDir, "info.json"), line, 0o600); err != nil {
		return err
	}
	fmt.Println(string(line))

	if *exitWithParent {
		go watchParent()
	}
	if err := <-apiErr; err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	return nil
}

// waitReady polls /readyz, which only turns 200 after the post-start hooks (bootstrap RBAC roles, priority
// levels) have run, so the first test request never races them.
func waitReady(cfg *rest.Config, apiErr <-chan error) error {
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-apiErr:
			return fmt.Errorf("kube-apiserver exited before ready: %v", err)
		default:
		}
		resp, err := client.Get(cfg.Host + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after 3 minutes")
}

// watchParent turns the parent's death into the same clean stop as SIGTERM, so a crashed test runner does not
// leave an API server holding ports and memory.
func watchParent() {
	parent := os.Getppid()
	for {
		time.Sleep(time.Second)
		if os.Getppid() != parent {
			_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
			return
		}
	}
}
