#!/usr/bin/env bash
# Makes sure promtool is on PATH for the alert rule tests (cmd/gateway's
# TestPromtoolRules): installs it from Debian's prometheus package if missing.
set -euo pipefail
if command -v promtool >/dev/null; then
  echo "promtool: $(promtool --version 2>&1 | head -1)"; exit 0
fi
echo "promtool: installing prometheus (which ships promtool)"
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v promtool >/dev/null || { echo "promtool: still missing after installing prometheus" >&2; exit 1; }
echo "promtool: $(promtool --version 2>&1 | head -1)"
