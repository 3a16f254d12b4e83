//go:build tools

// Package tools pins helm as a Go module dependency so .ci/run builds it from the module proxy.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
