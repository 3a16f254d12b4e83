package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/client-go/rest"
)

// compactRevKey is the key kube-apiserver's compactor uses as its lease and as the published compacted revision.
const compactRevKey = "compact_rev_key"

type control struct {
	etcd *clientv3.Client
	// probe is an admin REST client used to wait until the apiserver itself reports the compaction.
	probe *rest.RESTClient
	mu    sync.Mutex
}

type revisionInfo struct {
	Revision          int64 `json:"revision"`
	CompactedRevision int64 `json:"compactedRevision"`
}

func (c *control) revision(ctx context.Context) (revisionInfo, error) {
	resp, err := c.etcd.Get(ctx, compactRevKey)
	if err != nil {
		return revisionInfo{}, err
	}
	info := revisionInfo{Revision: resp.Header.Revision}
	if len(resp.Kvs) == 1 {
		info.CompactedRevision, _ = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	}
	return info, nil
}

// compact runs one round of the apiserver's own protocol (CAS on compact_rev_key, then etcd compaction) at the
// current revision, so the apiserver's compactor watch loop learns the new compacted revision like in production.
// Uncached resources (configmaps) answer 410 below it at once; with waitForCache the call also waits for the
// watch cache, which re-reads the compacted revision only every 15 s.
func (c *control) compact(ctx context.Context, waitForCache bool) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, err := c.etcd.Get(ctx, compactRevKey)
	if err != nil {
		return nil, err
	}
	var version int64
	if len(resp.Kvs) == 1 {
		version = resp.Kvs[0].Version
	}
	// Compact at the revision the CAS write itself will get: every object revision before this call is then
	// compacted, yet a watch from the newest RV still starts. Compacting at the last object write instead makes
	// a watch from one RV before it fail with a 500 (etcd drops the PrevKv it needs) rather than a 410.
	rev := resp.Header.Revision + 1
	_, current, compacted, err := etcd3.Compact(ctx, c.etcd, version, rev)
	if err != nil {
		return nil, err
	}
	if compacted != rev {
		return nil, fmt.Errorf("compaction lost the compact_rev_key race (wanted %d, got %d)", rev, compacted)
	}
	out := map[string]any{"compactedRevision": compacted, "revision": current}
	if waitForCache {
		out["cacheObserved"] = c.waitObserved(ctx, compacted)
	}
	return out, nil
}

// waitObserved polls an exact LIST below the compacted revision on a cached resource (namespaces) until it
// turns into 410, which shows the watch cache has caught up with the compaction.
func (c *control) waitObserved(ctx context.Context, compacted int64) bool {
	if compacted < 2 {
		return false
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var code int
		c.probe.Get().AbsPath("/api/v1/namespaces").
			Param("limit", "1").
			Param("resourceVersion", strconv.FormatInt(compacted-1, 10)).
			Param("resourceVersionMatch", "Exact").
			Do(ctx).StatusCode(&code)
		if code == http.StatusGone {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// serve starts the control endpoint; shutdown goes through SIGTERM because kube-apiserver's command owns the
// signal context and that is the only clean way to stop it.
func (c *control) serve(port int, extra func(*http.ServeMux)) (*http.Server, error) {
	mux := http.NewServeMux()
	extra(mux)
	mux.HandleFunc("GET /revision", func(w http.ResponseWriter, r *http.Request) {
		info, err := c.revision(r.Context())
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("POST /compact", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		out, err := c.compact(ctx, r.URL.Query().Get("wait") == "cache")
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusAccepted, map[string]bool{"stopping": true})
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		}()
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, nil
}
