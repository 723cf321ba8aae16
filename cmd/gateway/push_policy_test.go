package main

import (
	"path/filepath"
	"testing"
)

// TestShippedConfigsKeepTheWebhookPolicy: only the demo, whose receivers
// run on the same machine, lets webhooks into loopback; every other shipped
// config keeps the default target policy.
func TestShippedConfigsKeepTheWebhookPolicy(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot, "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		cfg := loadShippedConfig(t, path)
		for _, a := range cfg.Agents {
			p := a.Push
			opened := p.AllowPrivateNetworks || len(p.AllowedCIDRs) > 0 || len(p.AllowedHosts) > 0
			if demo := filepath.Base(path) == "demo.yaml"; opened != demo {
				t.Errorf("%s agent %q: push allow_private_networks %v, allowed_cidrs %v, allowed_hosts %v: only the demo may widen the policy, and it must (its receiver is on loopback)",
					filepath.Base(path), a.Name, p.AllowPrivateNetworks, p.AllowedCIDRs, p.AllowedHosts)
			}
		}
	}
}
