package main

// Tests of what ships under deploy/ and of the Dockerfile: every file
// parses, every path they name exists, and every gateway config they deploy
// loads through the real loader with the environment they give it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// gatewayImage is the image name the manifests give the gateway container.
const gatewayImage = "a2a-gateway"

// decodeAll parses every document of a YAML stream. Empty documents are
// skipped.
func decodeAll(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

func decodeFile(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, data)
}

// decodeInto re-decodes a generic document into a typed view of it.
func decodeInto(t *testing.T, doc map[string]any, v any) {
	t.Helper()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func mustExist(t *testing.T, file, referencedFrom string) {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		t.Errorf("%s references %s, which does not exist: %v", referencedFrom, file, err)
	}
}

// configArg returns the value of -config (or --config) in a gateway's
// arguments.
func configArg(args []string) (string, bool) {
	for i, a := range args {
		if (a == "-config" || a == "--config") && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, "-config="); ok {
			return v, true
		}
	}
	return "", false
}

// checkDeployedConfig loads a config the way a deployment runs it: with the
// environment it sets and nothing else. Every ${VAR} must be set there.
func checkDeployedConfig(t *testing.T, file string, env map[string]string, where string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range envRefs(raw) {
		if _, ok := env[name]; !ok {
			t.Errorf("%s: %s references ${%s}, which the deployment does not set", where, file, name)
		}
	}
	if _, err := loadWithEnv(t, file, env); err != nil {
		t.Errorf("%s: the deployed config does not load: %v", where, err)
	}
}

func TestDeployYAMLParses(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join(repoRoot, "deploy"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "templates" {
			return filepath.SkipDir // Helm templates: see TestHelmTemplatesUseDeclaredValues
		}
		if ext := filepath.Ext(p); d.IsDir() || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		n++
		t.Run(strings.TrimPrefix(p, repoRoot+"/"), func(t *testing.T) {
			if len(decodeFile(t, p)) == 0 {
				t.Error("holds no YAML document")
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("found %d YAML files under deploy/, want the kubernetes, helm and compose ones", n)
	}
}

// kustomization is the part of a kustomization file these tests follow.
type kustomization struct {
	Resources          []string    `yaml:"resources"`
	ConfigMapGenerator []generator `yaml:"configMapGenerator"`
	SecretGenerator    []generator `yaml:"secretGenerator"`
}

type generator struct {
	Name  string   `yaml:"name"`
	Files []string `yaml:"files"`
	Envs  []string `yaml:"envs"`
}

// kustomizationIn finds the kustomization file of a directory, under any of
// the three names kustomize accepts.
func kustomizationIn(dir string) (string, bool) {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name), true
		}
	}
	return "", false
}

// kustomizeTree is what a kustomization and the ones it includes produce.
type kustomizeTree struct {
	configMaps map[string]map[string]string // generated name -> key -> source file
	resources  []string                     // plain manifest files
}

// walkKustomization follows resources into directories and checks that
// every file named exists.
func walkKustomization(t *testing.T, dir string, tree *kustomizeTree) {
	t.Helper()
	file, ok := kustomizationIn(dir)
	if !ok {
		t.Errorf("%s has no kustomization file", dir)
		return
	}
	docs := decodeFile(t, file)
	if len(docs) != 1 {
		t.Fatalf("%s: want one document, got %d", file, len(docs))
	}
	var k kustomization
	decodeInto(t, docs[0], &k)
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		info, err := os.Stat(p)
		switch {
		case err != nil:
			t.Errorf("%s: resource %s does not exist", file, r)
		case info.IsDir():
			walkKustomization(t, p, tree)
		default:
			tree.resources = append(tree.resources, p)
		}
	}
	for _, g := range slices.Concat(k.ConfigMapGenerator, k.SecretGenerator) {
		for _, env := range g.Envs {
			mustExist(t, filepath.Join(dir, env), file)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		files := map[string]string{}
		for _, f := range g.Files {
			key, src, found := strings.Cut(f, "=")
			if !found {
				key, src = filepath.Base(f), f
			}
			files[key] = filepath.Join(dir, src)
			mustExist(t, files[key], file)
		}
		tree.configMaps[g.Name] = files
	}
}

// podSpec is the part of a Deployment these tests check.
type podSpec struct {
	Containers []struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	} `yaml:"containers"`
	Volumes []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
	} `yaml:"volumes"`
}

// TestKustomizeDeploysTheTestedConfig follows deploy/kubernetes the way
// kustomize does and checks that the gateway container's -config is a file
// of a generated ConfigMap, and that the file loads with the container's env.
func TestKustomizeDeploysTheTestedConfig(t *testing.T) {
	tree := &kustomizeTree{configMaps: map[string]map[string]string{}}
	walkKustomization(t, filepath.Join(repoRoot, "deploy", "kubernetes"), tree)
	found := 0
	for _, res := range tree.resources {
		for _, doc := range decodeFile(t, res) {
			if doc["kind"] != "Deployment" {
				continue
			}
			var d struct {
				Spec struct {
					Template struct {
						Spec podSpec `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			}
			decodeInto(t, doc, &d)
			pod := d.Spec.Template.Spec
			for _, c := range pod.Containers {
				if c.Image != gatewayImage && !strings.HasPrefix(c.Image, gatewayImage+":") {
					continue
				}
				found++
				where := res + ": container " + c.Name
				cfgPath, ok := configArg(c.Args)
				if !ok {
					t.Errorf("%s: no -config argument", where)
					continue
				}
				var cmName string
				for _, m := range c.VolumeMounts {
					if m.MountPath == path.Dir(cfgPath) {
						for _, v := range pod.Volumes {
							if v.Name == m.Name && v.ConfigMap != nil {
								cmName = v.ConfigMap.Name
							}
						}
					}
				}
				src, ok := tree.configMaps[cmName][path.Base(cfgPath)]
				if !ok {
					t.Errorf("%s: -config %s is not a key of a generated ConfigMap mounted at %s (mounted: %q)", where, cfgPath, path.Dir(cfgPath), cmName)
					continue
				}
				env := map[string]string{}
				for _, e := range c.Env {
					env[e.Name] = e.Value
				}
				checkDeployedConfig(t, src, env, where)
			}
		}
	}
	if found == 0 {
		t.Fatalf("no %s container found in the Deployments of deploy/kubernetes (resources: %v)", gatewayImage, tree.resources)
	}
}

var composeRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-([^}]*))?\}`)

// composeValue resolves Compose interpolation the way `docker compose` does
// when the variable is unset: ${NAME:-default} and ${NAME-default} give the
// default. A variable without a default must have a plausible value.
func composeValue(t *testing.T, v string) string {
	t.Helper()
	return composeRef.ReplaceAllStringFunc(v, func(m string) string {
		sub := composeRef.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[3]
		}
		if p, ok := plausibleEnv[sub[1]]; ok {
			return p
		}
		t.Errorf("compose interpolates ${%s} without a default: give one or add it to plausibleEnv", sub[1])
		return ""
	})
}

// composeService is the part of a Compose service these tests check.
type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Command     []string `yaml:"command"`
	Environment any      `yaml:"environment"`
	Volumes     []any    `yaml:"volumes"`
}

// bindMounts maps container paths to host paths for a service's bind
// mounts, in both the short ("./a:/b:ro") and the long syntax.
func (s composeService) bindMounts(dir string) map[string]string {
	binds := map[string]string{}
	for _, v := range s.Volumes {
		switch v := v.(type) {
		case string:
			parts := strings.Split(v, ":")
			if len(parts) >= 2 && (strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/")) {
				binds[parts[1]] = filepath.Join(dir, parts[0])
			}
		case map[string]any:
			if v["type"] == "bind" {
				src, _ := v["source"].(string)
				dst, _ := v["target"].(string)
				binds[dst] = filepath.Join(dir, src)
			}
		}
	}
	return binds
}

// environment reads a service's environment in its map or list form.
func (s composeService) environment(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	switch e := s.Environment.(type) {
	case map[string]any:
		for k, v := range e {
			str, _ := v.(string)
			env[k] = composeValue(t, str)
		}
	case []any:
		for _, kv := range e {
			k, v, _ := strings.Cut(kv.(string), "=")
			env[k] = composeValue(t, v)
		}
	}
	return env
}

func TestComposeDeploysTheTestedConfig(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "compose", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no compose file in deploy/compose: %v", err)
	}
	found := 0
	for _, file := range files {
		dir := filepath.Dir(file)
		var c struct {
			Services map[string]composeService `yaml:"services"`
			Secrets  map[string]struct {
				File string `yaml:"file"`
			} `yaml:"secrets"`
		}
		decodeInto(t, decodeFile(t, file)[0], &c)
		for name, s := range c.Secrets {
			if s.File != "" {
				mustExist(t, filepath.Join(dir, s.File), file+": secret "+name)
			}
		}
		for name, svc := range c.Services {
			where := file + ": service " + name
			for _, src := range svc.bindMounts(dir) {
				mustExist(t, src, where)
			}
			if svc.Build != nil {
				mustExist(t, filepath.Join(dir, svc.Build.Context), where)
				mustExist(t, filepath.Join(dir, svc.Build.Context, orDefault(svc.Build.Dockerfile, "Dockerfile")), where)
			}
			if svc.Image != gatewayImage && !strings.HasPrefix(svc.Image, gatewayImage+":") {
				continue
			}
			found++
			cfgPath, ok := configArg(svc.Command)
			if !ok {
				t.Errorf("%s: no -config in command", where)
				continue
			}
			src, ok := svc.bindMounts(dir)[cfgPath]
			if !ok {
				t.Errorf("%s: -config %s is not bind-mounted from a file of the repository", where, cfgPath)
				continue
			}
			checkDeployedConfig(t, src, svc.environment(t), where)
		}
	}
	if found == 0 {
		t.Fatalf("no %s service found in deploy/compose", gatewayImage)
	}
}

func orDefault(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)

// hasValuePath reports whether values holds the dotted path.
func hasValuePath(values any, path []string) bool {
	for _, key := range path {
		m, ok := values.(map[string]any)
		if !ok {
			return false
		}
		if values, ok = m[key]; !ok {
			return false
		}
	}
	return true
}

// checkOverrides reports keys of a values override file that the chart's
// values.yaml does not declare. Below an empty map or a list in the
// defaults, anything goes (podAnnotations, env, ...).
func checkOverrides(t *testing.T, file string, defaults, overrides map[string]any, prefix string) {
	t.Helper()
	for k, v := range overrides {
		d, ok := defaults[k]
		if !ok {
			t.Errorf("%s: %s%s is not declared in values.yaml", file, prefix, k)
			continue
		}
		dm, dIsMap := d.(map[string]any)
		vm, vIsMap := v.(map[string]any)
		if dIsMap && vIsMap && len(dm) > 0 {
			checkOverrides(t, file, dm, vm, prefix+k+".")
		}
	}
}

// TestHelmTemplatesUseDeclaredValues checks, without Helm, that templates
// and the ci/ value sets use only values that values.yaml declares: a typo
// there renders as an empty string and fails only in the cluster.
func TestHelmTemplatesUseDeclaredValues(t *testing.T) {
	charts, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "helm", "*", "Chart.yaml"))
	if err != nil || len(charts) == 0 {
		t.Fatalf("no chart in deploy/helm: %v", err)
	}
	for _, chart := range charts {
		dir := filepath.Dir(chart)
		values := decodeFile(t, filepath.Join(dir, "values.yaml"))[0]
		templates, _ := filepath.Glob(filepath.Join(dir, "templates", "*"))
		refs := 0
		for _, tpl := range templates {
			data, err := os.ReadFile(tpl)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range valuesRef.FindAllStringSubmatch(string(data), -1) {
				refs++
				if !hasValuePath(values, strings.Split(m[1][1:], ".")) {
					t.Errorf("%s uses .Values%s, which values.yaml does not declare", tpl, m[1])
				}
			}
		}
		if refs < 20 {
			t.Errorf("%s: found only %d .Values references in %d templates", dir, refs, len(templates))
		}
		overrides, _ := filepath.Glob(filepath.Join(dir, "ci", "*.yaml"))
		for _, o := range overrides {
			checkOverrides(t, o, values, decodeFile(t, o)[0], "")
		}
	}
}

// dockerfile is the Dockerfile's instructions, continuation lines joined.
func dockerfile(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cur := ""
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && cur == "") {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur += s + " "
			continue
		}
		lines = append(lines, strings.TrimSpace(cur+l))
		cur = ""
	}
	return lines
}

// dockerignored reports whether a .dockerignore pattern keeps rel, or a
// directory above it, out of the build context. It handles the patterns the
// project uses: globs, a leading "/" or "**/", a trailing "/".
func dockerignored(patterns []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		for _, p := range patterns {
			p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				if m, _ := path.Match(rest, parts[i]); m {
					return true
				}
				continue
			}
			if m, _ := path.Match(p, prefix); m {
				return true
			}
		}
	}
	return false
}

// TestDockerfile checks what `docker build` would need, since no Docker
// engine runs in CI: the context holds every file COPY names, the builder
// builds a package that exists, the runtime stage runs that binary, and the
// config its CMD names is one the loader accepts.
func TestDockerfile(t *testing.T) {
	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	copied := map[string]string{} // destination -> source in the context
	var builtTo, builtPkg, entrypoint, cmdConfig string
	for _, ins := range dockerfile(t) {
		fields := strings.Fields(ins)
		switch strings.ToUpper(fields[0]) {
		case "COPY":
			args := fields[1:]
			fromStage := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--from=") })
			args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "--") })
			srcs, dst := args[:len(args)-1], args[len(args)-1]
			for _, src := range srcs {
				copied[dst] = src
				if fromStage {
					continue
				}
				mustExist(t, filepath.Join(repoRoot, src), "Dockerfile: "+ins)
				if src != "." && dockerignored(patterns, strings.TrimPrefix(src, "./")) {
					t.Errorf("Dockerfile copies %s, which .dockerignore leaves out of the context", src)
				}
			}
		case "RUN":
			if m := regexp.MustCompile(`go build .*-o (\S+) (\./\S+)$`).FindStringSubmatch(ins); m != nil {
				builtTo, builtPkg = m[1], m[2]
			}
		case "ENTRYPOINT", "CMD":
			var argv []string
			if err := json.Unmarshal([]byte(strings.TrimSpace(ins[len(fields[0]):])), &argv); err != nil {
				t.Errorf("Dockerfile: %s is not in exec (JSON) form: %v", fields[0], err)
				continue
			}
			if fields[0] == "ENTRYPOINT" {
				entrypoint = argv[0]
			} else {
				cmdConfig, _ = configArg(argv)
			}
		}
	}
	if builtPkg == "" {
		t.Fatal("Dockerfile: no `go build ... -o OUT ./PKG` found")
	}
	mustExist(t, filepath.Join(repoRoot, builtPkg), "Dockerfile's go build")
	if dockerignored(patterns, strings.TrimPrefix(builtPkg, "./")+"/main.go") {
		t.Errorf(".dockerignore leaves %s out of the context", builtPkg)
	}
	if copied[entrypoint] != builtTo {
		t.Errorf("ENTRYPOINT %s is copied from %q, want the built binary %s", entrypoint, copied[entrypoint], builtTo)
	}
	src, ok := copied[cmdConfig]
	if !ok {
		t.Fatalf("CMD's -config %q is not a file the Dockerfile copies", cmdConfig)
	}
	loadShippedConfig(t, filepath.Join(repoRoot, src))
}

func TestDockerignoreMatching(t *testing.T) {
	patterns := []string{".git", "deploy/", "**/testdata/", "**/*_test.go", "/gateway"}
	for rel, want := range map[string]bool{
		".git/config":                  true,
		"deploy/helm/x/Chart.yaml":     true,
		"cmd/gateway/testdata/x.yaml":  true,
		"proxy/proxy_test.go":          true,
		"gateway":                      true,
		"cmd/gateway/main.go":          false,
		"configs/sidecar.yaml":         false,
		"go.mod":                       false,
		"proxy/testdata_helper.go":     false,
		"cmd/gateway/gateway_linux.go": false,
	} {
		if got := dockerignored(patterns, rel); got != want {
			t.Errorf("dockerignored(%q) = %v, want %v", rel, got, want)
		}
	}
}

// runTool runs a command-line tool from the repository root, or skips the
// test when the tool is not installed (CI machines may not have it).
func runTool(t *testing.T, name string, args ...string) ([]byte, error) {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed; this check runs where it is", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(strings.TrimSpace(stderr.String()) + ": " + err.Error())
	}
	return out, nil
}

// renderedConfig returns the gateway config in the ConfigMap of rendered
// manifests, and the ConfigMap's name.
func renderedConfig(t *testing.T, manifests []byte) (name string, config []byte) {
	t.Helper()
	for _, doc := range decodeAll(t, manifests) {
		if doc["kind"] != "ConfigMap" {
			continue
		}
		var cm struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Data map[string]string `yaml:"data"`
		}
		decodeInto(t, doc, &cm)
		if c, ok := cm.Data["config.yaml"]; ok {
			return cm.Metadata.Name, []byte(c)
		}
	}
	t.Fatal("the rendered manifests hold no ConfigMap with a config.yaml")
	return "", nil
}

// TestKustomizeBuild renders deploy/kubernetes with kubectl's kustomize and
// checks that the ConfigMap is configs/sidecar.yaml byte for byte.
func TestKustomizeBuild(t *testing.T) {
	out, err := runTool(t, "kubectl", "kustomize", "deploy/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	name, got := renderedConfig(t, out)
	want, err := os.ReadFile(filepath.Join(repoRoot, "configs", "sidecar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the ConfigMap differs from configs/sidecar.yaml:\n%s", got)
	}
	// The ConfigMap's own name, then the Deployment's reference to it.
	if strings.Count(string(out), "name: "+name+"\n") < 2 || !strings.HasPrefix(name, "a2a-gateway-config-") {
		t.Errorf("the Deployment does not mount the generated ConfigMap %q", name)
	}
}

// TestHelmTemplate renders the chart with each ci/ value set and checks the
// rendered gateway config with the loader, and that bad value combinations
// fail at render time.
func TestHelmTemplate(t *testing.T) {
	chart := filepath.Join("deploy", "helm", "a2a-gateway")
	base := []string{"template", "rel", chart, "--kube-version", "1.31.0"}
	sets := [][]string{{"--set", "gateway.publicURL=https://helpdesk.example.com/"}}
	ci, _ := filepath.Glob(filepath.Join(repoRoot, chart, "ci", "*.yaml"))
	for _, f := range ci {
		sets = append(sets, []string{"-f", strings.TrimPrefix(f, repoRoot+"/")})
	}
	for _, set := range sets {
		t.Run(set[len(set)-1], func(t *testing.T) {
			out, err := runTool(t, "helm", slices.Concat(base, set)...)
			if err != nil {
				t.Fatal(err)
			}
			_, config := renderedConfig(t, out)
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, config, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := loadWithEnv(t, file, nil); err != nil {
				t.Errorf("the rendered config does not load: %v\n%s", err, config)
			}
		})
	}
	for _, bad := range []struct {
		set  []string
		want string
	}{
		{nil, "gateway.publicURL is required"},
		{[]string{"--set", "replicaCount=2"}, "replicaCount > 1 needs store.type redis"},
		{[]string{"--set", "store.type=redis"}, "store.redis.address is required"},
		{[]string{"--set", "store.type=etcd"}, `store.type "etcd" is not one of memory, redis`},
	} {
		t.Run(bad.want, func(t *testing.T) {
			set := slices.Concat([]string{"--set", "gateway.publicURL=https://helpdesk.example.com/"}, bad.set)
			if bad.set == nil {
				set = nil
			}
			_, err := runTool(t, "helm", slices.Concat(base, set)...)
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("helm template %v: got %v, want an error containing %q", set, err, bad.want)
			}
		})
	}
}
