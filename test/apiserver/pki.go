package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// users are the static token identities; the groups column goes verbatim into --token-auth-file.
var users = []struct{ name, groups string }{
	{"admin", "system:masters"},
	{"recorder", ""},
	{"replayer", ""},
	{"nobody", ""},
}

type pkiPaths struct {
	caCert, caKey, servingCert, servingKey, saKey, egressCert, egressKey string
}

func newPKIPaths(dir string) pkiPaths {
	return pkiPaths{
		caCert:      filepath.Join(dir, "ca.crt"),
		caKey:       filepath.Join(dir, "ca.key"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		egressCert:  filepath.Join(dir, "egress-client.crt"),
		egressKey:   filepath.Join(dir, "egress-client.key"),
	}
}

// writeFileAtomic makes a SIGKILL in the middle of first start leave either no file or a whole one, so the next
// start on the same data dir never reads half a key.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func readCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	return x509.ParseCertificate(block.Bytes)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// ensurePKI creates the CA, the serving certificate and the service-account key once, then reuses them so
// kubeconfigs and CA bundles handed out before a restart stay valid after it.
func ensurePKI(p pkiPaths) error {
	if !exists(p.caCert) || !exists(p.caKey) {
		key, keyPEM, err := newKey()
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "krply-test-ca"},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().AddDate(10, 0, 0),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(p.caKey, keyPEM, 0o600); err != nil {
			return err
		}
		if err := writeFileAtomic(p.caCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
			return err
		}
		// A new CA invalidates any leaf left from an earlier, interrupted start.
		_ = os.Remove(p.servingCert)
		_ = os.Remove(p.egressCert)
	}
	if !exists(p.servingCert) || !exists(p.servingKey) {
		if err := issueServingCert(p); err != nil {
			return err
		}
	}
	if !exists(p.egressCert) || !exists(p.egressKey) {
		if err := issueEgressClientCert(p); err != nil {
			return err
		}
	}
	if !exists(p.saKey) {
		_, keyPEM, err := newKey()
		if err != nil {
			return err
		}
		if err := writeFileAtomic(p.saKey, keyPEM, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func issueServingCert(p pkiPaths) error {
	return issueCert(p, p.servingCert, p.servingKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")},
	})
}

// issueEgressClientCert is the identity kube-apiserver presents to the egress proxy, which accepts no other.
func issueEgressClientCert(p pkiPaths) error {
	return issueCert(p, p.egressCert, p.egressKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "krply-egress-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// signLeaf fills in the fields every harness leaf shares and signs tmpl with the harness CA.
func signLeaf(p pkiPaths, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	caKey, err := readKey(p.caKey)
	if err != nil {
		return nil, nil, err
	}
	caCert, err := readCert(p.caCert)
	if err != nil {
		return nil, nil, err
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func issueCert(p pkiPaths, certPath, keyPath string, tmpl *x509.Certificate) error {
	certPEM, keyPEM, err := signLeaf(p, tmpl)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, certPEM, 0o644)
}

// issueLeafPEM gives a test a serving certificate for a Service name (say hook.ns.svc) that the API server
// trusts through the CA bundle returned with it, so a local process can serve an in-cluster webhook.
func issueLeafPEM(p pkiPaths, dnsNames []string) (certPEM, keyPEM, caPEM []byte, err error) {
	certPEM, keyPEM, err = signLeaf(p, &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	caPEM, err = os.ReadFile(p.caCert)
	return certPEM, keyPEM, caPEM, err
}

// ensureTokens keeps one random bearer token per user in tokens.json, and rewrites the CSV the apiserver reads.
func ensureTokens(dir string) (map[string]string, string, error) {
	jsonPath := filepath.Join(dir, "tokens.json")
	tokens := map[string]string{}
	if data, err := os.ReadFile(jsonPath); err == nil {
		if err := json.Unmarshal(data, &tokens); err != nil {
			return nil, "", fmt.Errorf("%s: %w", jsonPath, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	changed := false
	for _, u := range users {
		if tokens[u.name] == "" {
			buf := make([]byte, 24)
			if _, err := rand.Read(buf); err != nil {
				return nil, "", err
			}
			tokens[u.name] = u.name + "-" + hex.EncodeToString(buf)
			changed = true
		}
	}
	if changed {
		data, _ := json.MarshalIndent(tokens, "", "  ")
		if err := writeFileAtomic(jsonPath, data, 0o600); err != nil {
			return nil, "", err
		}
	}
	var csv strings.Builder
	for _, u := range users {
		// token,user,uid[,"group1,group2"]; an empty groups column would become a group named "".
		fmt.Fprintf(&csv, "%s,%s,%s", tokens[u.name], u.name, "krply-"+u.name)
		if u.groups != "" {
			fmt.Fprintf(&csv, ",%q", u.groups)
		}
		csv.WriteString("\n")
	}
	csvPath := filepath.Join(dir, "tokens.csv")
	if err := writeFileAtomic(csvPath, []byte(csv.String()), 0o600); err != nil {
		return nil, "", err
	}
	return tokens, csvPath, nil
}
