package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// egressSelectorConfig sends kube-apiserver's `cluster` traffic (webhooks, CRD conversion, aggregated APIs) to the
// harness's CONNECT proxy. TCP HTTPConnect needs TLS with a client certificate: kube-apiserver 1.37 builds its
// proxy dialer with tls.Dialer from tlsConfig unconditionally, so an http:// URL passes validation and then
// dereferences a nil tlsConfig.
const egressSelectorConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
  - name: cluster
    connection:
      proxyProtocol: HTTPConnect
      transport:
        tcp:
          url: https://127.0.0.1:%d
          tlsConfig:
            caBundle: %s
            clientCert: %s
            clientKey: %s
`

// maxEgressEvents bounds the log tests read; a long-running `npm run apiserver` must not grow without limit.
const maxEgressEvents = 1000

var serviceHostPattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc$`)

type egressRoute struct {
	Service   string `json:"service"`
	Port      int    `json:"port"`
	LocalPort int    `json:"localPort"`
}

// egressEvent is one CONNECT the API server made. Outcome is routed (to a registered local port), loopback (the
// target was already on this machine), refused (no route) or unreachable (a route whose local port is closed).
// Via is the proxy's own end of the upstream socket, so a local server can match the connection it accepted.
type egressEvent struct {
	Seq      int64     `json:"seq"`
	At       time.Time `json:"at"`
	Target   string    `json:"target"`
	Service  string    `json:"service,omitempty"`
	Outcome  string    `json:"outcome"`
	Upstream string    `json:"upstream,omitempty"`
	Via      string    `json:"via,omitempty"`
	Reason   string    `json:"reason,omitempty"`
}

type egressProxy struct {
	port      int
	routeFile string
	mu        sync.Mutex
	routes    map[string]int
	events    []egressEvent
	seq       int64
	// services is set once the API server is ready; before that no webhook can be registered anyway.
	services kubernetes.Interface
}

func routeKey(service string, port int) string { return service + ":" + strconv.Itoa(port) }

// newEgressProxy reloads the routes of an earlier run, so a restart on the same data dir keeps them like it keeps
// certificates and tokens.
func newEgressProxy(port int, routeFile string) (*egressProxy, error) {
	e := &egressProxy{port: port, routeFile: routeFile, routes: map[string]int{}}
	data, err := os.ReadFile(routeFile)
	if errors.Is(err, os.ErrNotExist) {
		return e, nil
	} else if err != nil {
		return nil, err
	}
	var saved []egressRoute
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("%s: %w", routeFile, err)
	}
	for _, r := range saved {
		e.routes[routeKey(r.Service, r.Port)] = r.LocalPort
	}
	return e, nil
}

// listen serves CONNECT over TLS with the harness serving certificate and accepts only clients whose certificate
// the harness CA signed: the API server's egress dialer, and nothing else on the machine.
func (e *egressProxy) listen(pk pkiPaths) error {
	cert, err := tls.LoadX509KeyPair(pk.servingCert, pk.servingKey)
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(pk.caCert)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	l, err := tls.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(e.port)), &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	})
	if err != nil {
		return err
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go e.handle(conn)
		}
	}()
	return nil
}

func (e *egressProxy) record(ev egressEvent) egressEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.Seq = e.seq
	ev.At = time.Now().UTC()
	e.events = append(e.events, ev)
	if len(e.events) > maxEgressEvents {
		e.events = e.events[len(e.events)-maxEgressEvents:]
	}
	return ev
}

func (e *egressProxy) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		writeStatus(conn, http.StatusMethodNotAllowed, "krply harness egress proxy speaks CONNECT only")
		return
	}
	target := req.RequestURI
	ev := egressEvent{Target: target}
	upstream, service, reason := e.resolve(target)
	ev.Service = service
	if upstream == "" {
		ev.Outcome, ev.Reason = "refused", reason
		e.record(ev)
		writeStatus(conn, http.StatusForbidden, "krply harness egress refused "+target+": "+reason)
		return
	}
	ev.Upstream = upstream
	up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		ev.Outcome, ev.Reason = "unreachable", "nothing listens on "+upstream
		e.record(ev)
		writeStatus(conn, http.StatusBadGateway, "krply harness egress: "+target+": "+ev.Reason)
		return
	}
	defer up.Close()
	ev.Via = up.LocalAddr().String()
	ev.Outcome = "routed"
	if service == "" {
		ev.Outcome = "loopback"
	}
	e.record(ev)
	writeStatus(conn, http.StatusOK, "Connection established")
	_ = conn.SetDeadline(time.Time{})
	pipe(conn, br, up)
}

// writeStatus puts the reason into the status line because that is the part kube-apiserver quotes in the
// webhook error a client sees ("proxy error from ... code 403: 403 <reason>").
func writeStatus(conn net.Conn, code int, reason string) {
	reason = strings.NewReplacer("\r", " ", "\n", " ").Replace(reason)
	_, _ = fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n\r\n", code, reason)
}

func pipe(client net.Conn, clientReader io.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, clientReader)
		if tcp, ok := up.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, up)
		done <- struct{}{}
	}()
	<-done
	<-done
}

// resolve maps a CONNECT target to a loopback address. kube-apiserver resolves a webhook's or an APIService's
// Service to its cluster IP before dialing, so a target is usually `<clusterIP>:<port>`, looked up here by
// Service; a URL webhook or an ExternalName Service arrives as a host name. Loopback targets pass unchanged,
// names are never looked up in DNS, and everything else is refused.
func (e *egressProxy) resolve(target string) (upstream, service, reason string) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		return "", "", "not a host:port"
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", "", "bad port"
	}
	if host == "localhost" {
		return net.JoinHostPort("127.0.0.1", portText), "", ""
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return target, "", ""
		}
		name, err := e.serviceByClusterIP(ip.String())
		if err != nil {
			return "", "", err.Error()
		}
		host = name
	}
	host = strings.TrimSuffix(strings.TrimSuffix(host, "."), ".cluster.local")
	if !serviceHostPattern.MatchString(host) {
		return "", "", "not loopback and not a Service of this cluster"
	}
	e.mu.Lock()
	local, ok := e.routes[routeKey(host, port)]
	e.mu.Unlock()
	if !ok {
		return "", routeKey(host, port), "Service " + routeKey(host, port) + " has no local port registered"
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(local)), routeKey(host, port), ""
}

func (e *egressProxy) serviceByClusterIP(ip string) (string, error) {
	e.mu.Lock()
	cs := e.services
	e.mu.Unlock()
	if cs == nil {
		return "", fmt.Errorf("no Service has cluster IP %s (the API server is not ready)", ip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := cs.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing Services for cluster IP %s: %v", ip, err)
	}
	for _, svc := range list.Items {
		if hasClusterIP(&svc, ip) {
			return svc.Name + "." + svc.Namespace + ".svc", nil
		}
	}
	return "", fmt.Errorf("no Service has cluster IP %s", ip)
}

func hasClusterIP(svc *corev1.Service, ip string) bool {
	if svc.Spec.ClusterIP == ip {
		return true
	}
	for _, each := range svc.Spec.ClusterIPs {
		if each == ip {
			return true
		}
	}
	return false
}

func (e *egressProxy) setServices(cs kubernetes.Interface) {
	e.mu.Lock()
	e.services = cs
	e.mu.Unlock()
}

// routeList and saveLocked keep the routes sorted so GET /egress and the route file are stable.
func (e *egressProxy) routeList() []egressRoute {
	out := []egressRoute{}
	for key, local := range e.routes {
		i := strings.LastIndexByte(key, ':')
		port, _ := strconv.Atoi(key[i+1:])
		out = append(out, egressRoute{Service: key[:i], Port: port, LocalPort: local})
	}
	sort.Slice(out, func(a, b int) bool {
		return routeKey(out[a].Service, out[a].Port) < routeKey(out[b].Service, out[b].Port)
	})
	return out
}

func (e *egressProxy) saveLocked() error {
	data, _ := json.MarshalIndent(e.routeList(), "", "  ")
	return writeFileAtomic(e.routeFile, data, 0o644)
}

func (e *egressProxy) setRoute(r egressRoute, remove bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if remove {
		delete(e.routes, routeKey(r.Service, r.Port))
	} else {
		e.routes[routeKey(r.Service, r.Port)] = r.LocalPort
	}
	return e.saveLocked()
}
