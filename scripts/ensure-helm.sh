#!/usr/bin/env bash
# Makes sure helm is on PATH for the chart tests (cmd/gateway's
# TestHelmTemplate and TestHelmMonitoring): builds it from the Go module
# proxy into $(go env GOPATH)/bin when missing, since Debian ships no helm
# and download sites are out of reach. The caller puts that directory on
# PATH (scripts/test.sh does).
set -euo pipefail
version=v4.3.2
bin="$(go env GOPATH)/bin"
if command -v helm >/dev/null || [[ -x "$bin/helm" ]]; then
  echo "helm: $(PATH="$bin:$PATH" helm version --short 2>&1)"; exit 0
fi
echo "helm: building helm.sh/helm/v4/cmd/helm@$version (a few minutes the first time)"
GOBIN="$bin" GOFLAGS=-mod=mod go install "helm.sh/helm/v4/cmd/helm@$version"
echo "helm: $("$bin/helm" version --short 2>&1)"
