package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// registerEgress adds the proxy's routes to the control endpoint: tests register the local port that serves a
// Service, read what the API server dialed, and get a serving certificate the API server will trust.
func (e *egressProxy) registerEgress(mux *http.ServeMux, pk pkiPaths) {
	mux.HandleFunc("GET /egress", func(w http.ResponseWriter, r *http.Request) {
		after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		e.mu.Lock()
		events := []egressEvent{}
		for _, ev := range e.events {
			if ev.Seq > after {
				events = append(events, ev)
			}
		}
		out := map[string]any{
			"proxyUrl": "https://127.0.0.1:" + strconv.Itoa(e.port),
			"routes":   e.routeList(),
			"events":   events,
		}
		e.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	})
	route := func(remove bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var body egressRoute
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
				return
			}
			body.Service = strings.TrimSuffix(body.Service, ".cluster.local")
			if err := validRoute(body, remove); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
			if err := e.setRoute(body, remove); err != nil {
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"routes": e.snapshotRoutes()})
		}
	}
	mux.HandleFunc("PUT /egress/routes", route(false))
	mux.HandleFunc("DELETE /egress/routes", route(true))
	mux.HandleFunc("POST /egress/certificates", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			DNSNames []string `json:"dnsNames"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.DNSNames) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": `body must be {"dnsNames": [...]}`})
			return
		}
		certPEM, keyPEM, caPEM, err := issueLeafPEM(pk, body.DNSNames)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"cert": string(certPEM), "key": string(keyPEM), "ca": string(caPEM)})
	})
}

func (e *egressProxy) snapshotRoutes() []egressRoute {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.routeList()
}

// validRoute accepts only `name.namespace.svc` (the form a webhook's service reference produces) so a typo
// cannot register a route no request will ever match.
func validRoute(r egressRoute, remove bool) error {
	if !serviceHostPattern.MatchString(r.Service) {
		return fmt.Errorf("service %q is not name.namespace.svc", r.Service)
	}
	if r.Port < 1 || r.Port > 65535 {
		return fmt.Errorf("port %d is out of range", r.Port)
	}
	if !remove && (r.LocalPort < 1 || r.LocalPort > 65535) {
		return fmt.Errorf("localPort %d is out of range", r.LocalPort)
	}
	return nil
}
