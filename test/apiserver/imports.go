package main

// Blank imports mirror cmd/kube-apiserver/apiserver.go so the embedded server registers the same log formats
// and metrics as the real binary.
import (
	_ "time/tzdata"

	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)
