package main

// Tests of what ships under deploy/ and of the Dockerfile: every file
// parses, every path they name exists, and every gateway config they deploy
// loads through the real loader with the environment they give it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2agate/gateway/internal/testfiles"
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
	for _, name := range envRefs(t, file) {
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
	if n < 11 {
		t.Errorf("found %d YAML files under deploy/, want the kubernetes, helm, compose and prometheus ones", n)
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
		Secret *struct {
			Items []keyPath `yaml:"items"`
		} `yaml:"secret"`
		Projected *struct {
			Sources []struct {
				Secret *struct {
					Items []keyPath `yaml:"items"`
				} `yaml:"secret"`
			} `yaml:"sources"`
		} `yaml:"projected"`
	} `yaml:"volumes"`
}

type keyPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

// mountedSecretFiles returns the paths at which the named container sees the
// items of the Secrets mounted into it, plain or projected.
func (p podSpec) mountedSecretFiles(container string) map[string]bool {
	files := map[string]bool{}
	for _, c := range p.Containers {
		if c.Name != container {
			continue
		}
		for _, m := range c.VolumeMounts {
			for _, v := range p.Volumes {
				if v.Name != m.Name {
					continue
				}
				var items []keyPath
				if v.Secret != nil {
					items = v.Secret.Items
				}
				if v.Projected != nil {
					for _, src := range v.Projected.Sources {
						if src.Secret != nil {
							items = append(items, src.Secret.Items...)
						}
					}
				}
				for _, it := range items {
					files[path.Join(m.MountPath, it.Path)] = true
				}
			}
		}
	}
	return files
}

// configFiles returns the files a gateway config names: every value of a
// key ending in _file, at any depth, by the key's path.
func configFiles(t *testing.T, config []byte) map[string]string {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(config, &doc); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && strings.HasSuffix(k, "_file") {
					files[prefix+k] = s
				}
				walk(prefix+k+".", e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s%d.", prefix, i), e)
			}
		}
	}
	walk("", doc)
	return files
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
			pod, ok := deploymentPod(t, doc)
			if !ok {
				continue
			}
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
	files := testfiles.Glob(t, repoRoot, "deploy", "compose", "*.yaml")
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
	charts := testfiles.Glob(t, repoRoot, "deploy", "helm", "*", "Chart.yaml")
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
				// The context has no .git: without it, `gateway version`
				// in the image says (devel).
				if !strings.Contains(ins, "-X main.buildVersion=${VERSION}") {
					t.Errorf("Dockerfile: the go build does not set main.buildVersion from the VERSION build argument: %s", ins)
				}
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

// renderedPod returns the pod template of the Deployment in rendered
// manifests.
func renderedPod(t *testing.T, manifests []byte) podSpec {
	t.Helper()
	for _, doc := range decodeAll(t, manifests) {
		if pod, ok := deploymentPod(t, doc); ok {
			return pod
		}
	}
	t.Fatal("the rendered manifests hold no Deployment")
	return podSpec{}
}

// deploymentPod returns the pod template of doc when it is a Deployment.
func deploymentPod(t *testing.T, doc map[string]any) (podSpec, bool) {
	t.Helper()
	if doc["kind"] != "Deployment" {
		return podSpec{}, false
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec podSpec `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	decodeInto(t, doc, &d)
	return d.Spec.Template.Spec, true
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
			file := testfiles.Write(t, "config.yaml", config)
			if _, err := loadWithEnv(t, file, nil); err != nil {
				t.Errorf("the rendered config does not load: %v\n%s", err, config)
			}
			mounted := renderedPod(t, out).mountedSecretFiles("a2a-gateway")
			for key, f := range configFiles(t, config) {
				if !mounted[f] {
					t.Errorf("the config's %s is %s, which no Secret mounted into the gateway container holds (mounted: %v)", key, f, slices.Sorted(maps.Keys(mounted)))
				}
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
		{[]string{"--set", "store.type=redis,store.redis.mode=replicated"}, `store.redis.mode "replicated" is not one of single, cluster, sentinel`},
		{[]string{"--set", "store.type=redis,store.redis.mode=cluster"}, "store.redis.addresses is required in mode cluster: the seed nodes"},
		{[]string{"--set", "store.type=redis,store.redis.mode=sentinel,store.redis.addresses={s:26379}"}, "store.redis.masterName is required in mode sentinel"},
		{[]string{"--set", "store.type=redis,store.redis.address=r:6379,store.redis.tls.ca.secretName=ca"}, "store.redis.tls: set enabled: true"},
		{[]string{"--set", "terminationGracePeriodSeconds=35"}, "terminationGracePeriodSeconds (35) must exceed preStopSleepSeconds plus gateway.shutdownTimeout (35 s)"},
		{[]string{"--set", "gateway.shutdownTimeout=2m,terminationGracePeriodSeconds=120"}, "(125 s)"},
		{[]string{"--set", "gateway.shutdownTimeout=1500ms"}, `gateway.shutdownTimeout "1500ms": want a duration of whole seconds`},
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

// The dashboard and the alert rules: deploy/grafana and deploy/prometheus
// hold the canonical files; the chart holds copies in files/, since Helm
// reads only files inside the chart.
var (
	dashboardFile = filepath.Join("deploy", "grafana", "a2a-gateway-dashboard.json")
	rulesFile     = filepath.Join("deploy", "prometheus", "a2a-gateway-rules.yaml")
	rulesTestFile = filepath.Join("deploy", "prometheus", "a2a-gateway-rules.test.yaml")
	chartFiles    = filepath.Join("deploy", "helm", "a2a-gateway", "files")
)

func readRepoFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestChartMonitoringFilesMatchDeploy: the chart installs the very files
// deploy/ ships, and nothing else from files/.
func TestChartMonitoringFilesMatchDeploy(t *testing.T) {
	want := map[string]string{}
	for _, canonical := range []string{dashboardFile, rulesFile} {
		want[filepath.Base(canonical)] = canonical
	}
	entries, err := os.ReadDir(filepath.Join(repoRoot, chartFiles))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("%s/%s is not a copy of a file under deploy/grafana or deploy/prometheus: remove it", chartFiles, e.Name())
		}
	}
	for name, canonical := range want {
		copied := filepath.Join(chartFiles, name)
		if _, err := os.Stat(filepath.Join(repoRoot, copied)); err != nil {
			t.Errorf("the chart has no copy of %s: cp %s %s", canonical, canonical, copied)
			continue
		}
		if !bytes.Equal(readRepoFile(t, canonical), readRepoFile(t, copied)) {
			t.Errorf("%s differs from %s, which is the one to edit: cp %s %s", copied, canonical, canonical, copied)
		}
	}
}

// metricFamily is what the queries may rely on about a metric.
type metricFamily struct {
	kind   string // counter, gauge, histogram, ...
	labels map[string]bool
}

var familyLine = regexp.MustCompile(`^(a2a_gateway_[a-z0-9_]+) ([a-z]+) \{([a-z0-9_,]*)\} `)

// gatewayMetrics lists the gateway's metric families: the proxy's from its
// golden file (which has every family, observed or not), and the gateway's
// own (config reloads) from the /metrics of a running gateway.
func gatewayMetrics(t *testing.T) map[string]metricFamily {
	t.Helper()
	families := map[string]metricFamily{}
	for _, line := range strings.Split(string(readRepoFile(t, filepath.Join("proxy", "testdata", "metrics", "families.txt"))), "\n") {
		if line == "" {
			continue
		}
		m := familyLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("proxy/testdata/metrics/families.txt: cannot read %q", line)
		}
		f := metricFamily{kind: m[2], labels: map[string]bool{}}
		for _, l := range strings.Split(m[3], ",") {
			if l != "" {
				f.labels[l] = true
			}
		}
		families[m[1]] = f
	}

	backend := startLegacyBackend(t)
	// With tls, so that the certificate's metric is among those scraped.
	files, _ := testCerts(t)
	g := startGateway(t, strings.Replace(gatewayConfig(backend.URL+"/", "Metrics"), "agents:",
		"tls: {cert_file: "+files.ServerCert+", key_file: "+files.ServerKey+"}\nagents:", 1))
	status, body := httpGet(t, g.admin+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", status)
	}
	typeLine := regexp.MustCompile(`^# TYPE (a2a_gateway_[a-z0-9_]+) ([a-z]+)$`)
	sample := regexp.MustCompile(`^(a2a_gateway_[a-z0-9_]+)\{([^}]*)\}`)
	labelName := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for _, line := range strings.Split(body, "\n") {
		if m := typeLine.FindStringSubmatch(line); m != nil {
			if _, ok := families[m[1]]; !ok {
				families[m[1]] = metricFamily{kind: m[2], labels: map[string]bool{}}
			}
		}
		if m := sample.FindStringSubmatch(line); m != nil {
			if f, ok := families[m[1]]; ok && f.kind != "histogram" {
				for _, l := range labelName.FindAllStringSubmatch(m[2], -1) {
					f.labels[l[1]] = true
				}
			}
		}
	}
	if _, ok := families["a2a_gateway_config_reloads_total"]; !ok {
		t.Fatalf("the gateway's /metrics has no a2a_gateway_config_reloads_total:\n%s", body)
	}
	return families
}

// targetLabels are the labels Prometheus and the Prometheus Operator attach
// to every scraped series.
var targetLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "pod": true, "service": true, "container": true, "endpoint": true}

var (
	metricRef     = regexp.MustCompile(`a2a_gateway_[a-z0-9_]+`)
	selectorRef   = regexp.MustCompile(`(a2a_gateway_[a-z0-9_]+)\{([^{}]*)\}`)
	matcherLabel  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	groupingRef   = regexp.MustCompile(`by\s*\(([^)]*)\)\s*\((?:(?:rate|increase|irate|delta)\()?(a2a_gateway_[a-z0-9_]+)`)
	quotedString  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	histogramPart = regexp.MustCompile(`_(bucket|sum|count)$`)
)

// resolveMetric maps a series name a query uses to its family, and says
// what is wrong with using it: a name that does not exist, or a histogram
// queried without its _bucket, _sum or _count suffix.
func resolveMetric(families map[string]metricFamily, series string) (metricFamily, string) {
	if f, ok := families[series]; ok {
		if f.kind == "histogram" {
			return f, series + " is a histogram: query its _bucket, _sum or _count series"
		}
		return f, ""
	}
	if base := histogramPart.ReplaceAllString(series, ""); base != series {
		if f, ok := families[base]; ok && f.kind == "histogram" {
			return f, ""
		}
	}
	return metricFamily{}, series + " is not a metric the gateway exports (proxy/testdata/metrics/families.txt, or the gateway's /metrics)"
}

// queryProblems checks a PromQL expression against the gateway's metrics:
// every metric it names exists, and every label it matches on or groups by
// is one of that metric's (or a target label). It returns the metric
// families named and what is wrong.
func queryProblems(families map[string]metricFamily, expr string) (names, problems []string) {
	for _, series := range metricRef.FindAllString(expr, -1) {
		if _, problem := resolveMetric(families, series); problem != "" {
			problems = append(problems, problem)
			continue
		}
		names = append(names, histogramPart.ReplaceAllString(series, ""))
	}
	allowed := func(series, label string) bool {
		f, problem := resolveMetric(families, series)
		return problem != "" || f.labels[label] || targetLabels[label] || (label == "le" && strings.HasSuffix(series, "_bucket"))
	}
	unquoted := quotedString.ReplaceAllString(expr, `""`)
	for _, m := range selectorRef.FindAllStringSubmatch(unquoted, -1) {
		for _, l := range matcherLabel.FindAllStringSubmatch(m[2], -1) {
			if !allowed(m[1], l[1]) {
				problems = append(problems, fmt.Sprintf("%s has no label %q", m[1], l[1]))
			}
		}
	}
	for _, m := range groupingRef.FindAllStringSubmatch(unquoted, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !allowed(m[2], l) {
				problems = append(problems, fmt.Sprintf("groups %s by %q, a label it does not have", m[2], l))
			}
		}
	}
	return names, problems
}

// checkQuery reports queryProblems as test errors and returns the families
// the expression names.
func checkQuery(t *testing.T, families map[string]metricFamily, where, expr string) []string {
	t.Helper()
	names, problems := queryProblems(families, expr)
	for _, p := range problems {
		t.Errorf("%s: %s\n  in %s", where, p, expr)
	}
	return names
}

func TestQueryProblemsCatchesWrongNamesAndLabels(t *testing.T) {
	families := map[string]metricFamily{
		"a2a_gateway_requests_total":           {kind: "counter", labels: map[string]bool{"agent": true, "outcome": true}},
		"a2a_gateway_request_duration_seconds": {kind: "histogram", labels: map[string]bool{"agent": true, "op": true}},
		"a2a_gateway_task_index_tasks":         {kind: "gauge", labels: map[string]bool{}},
		"a2a_gateway_task_index_errors_total":  {kind: "counter", labels: map[string]bool{"operation": true}},
	}
	for _, tc := range []struct {
		expr string
		bad  bool
	}{
		{`sum by (agent, outcome) (rate(a2a_gateway_requests_total{job=~"$job", outcome!="ok"}[5m]))`, false},
		{`histogram_quantile(0.99, sum by (agent, le) (rate(a2a_gateway_request_duration_seconds_bucket{op!~"a|b"}[5m])))`, false},
		{`min by (namespace, job, instance) (a2a_gateway_task_index_tasks) < 0`, false},
		{`rate(a2a_gateway_requests_total{outcome="agent=\"x\""}[5m])`, false},   // a label inside a string is no matcher
		{`sum(rate(a2a_gateway_request_total[5m]))`, true},                       // renamed
		{`rate(a2a_gateway_request_duration_seconds[5m])`, true},                 // a histogram without its suffix
		{`rate(a2a_gateway_requests_total_bucket[5m])`, true},                    // not a histogram
		{`sum by (agent) (rate(a2a_gateway_task_index_errors_total[5m]))`, true}, // no agent label
		{`rate(a2a_gateway_task_index_errors_total{agent=~"$agent"}[5m])`, true}, // no agent label
		{`sum by (le) (rate(a2a_gateway_requests_total[5m]))`, true},             // le on a counter
	} {
		_, problems := queryProblems(families, tc.expr)
		if got := len(problems) > 0; got != tc.bad {
			t.Errorf("%s: problems %q, want problems: %v", tc.expr, problems, tc.bad)
		}
	}
}

// dashboardPanel is the part of a Grafana panel these tests check.
type dashboardPanel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource *datasourceRef           `json:"datasource"`
	GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
	Targets    []struct {
		Datasource *datasourceRef `json:"datasource"`
		Expr       string         `json:"expr"`
		RefID      string         `json:"refId"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"` // a collapsed row's
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashboard struct {
	UID        string           `json:"uid"`
	Title      string           `json:"title"`
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(readRepoFile(t, dashboardFile)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s is not a Grafana dashboard: %v", dashboardFile, err)
	}
	if dec.More() {
		t.Fatalf("%s holds more than one JSON value", dashboardFile)
	}
	return d
}

// allPanels flattens rows.
func allPanels(panels []dashboardPanel) []dashboardPanel {
	var all []dashboardPanel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, allPanels(p.Panels)...)
	}
	return all
}

// dashboardVar matches a Grafana variable reference: $name or ${name}.
var dashboardVar = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// TestDashboard checks the dashboard's structure: unique panel ids, a
// layout without overlaps, every query on the templated Prometheus data
// source, and only variables it defines.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("the dashboard needs a uid and a title (uid %q, title %q)", d.UID, d.Title)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" {
		t.Errorf("no data source variable named datasource: the dashboard must not name a data source of one Grafana (variables: %v)", vars)
	}
	if vars["agent"] != "query" {
		t.Errorf("no agent query variable (variables: %v)", vars)
	}
	const wantDS = "${datasource}"
	ids := map[int]string{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	queries := 0
	for _, p := range allPanels(d.Panels) {
		if p.ID <= 0 {
			t.Errorf("panel %q has no id", p.Title)
		} else if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is outside Grafana's 24 columns", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
					x, y = g.X+g.W, g.Y+g.H
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != wantDS {
			t.Errorf("panel %q: datasource %+v, want uid %s", p.Title, p.Datasource, wantDS)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			queries++
			if q.Datasource == nil || q.Datasource.UID != wantDS || q.Datasource.Type != "prometheus" {
				t.Errorf("panel %q, query %s: datasource %+v, want prometheus %s", p.Title, q.RefID, q.Datasource, wantDS)
			}
			if q.Expr == "" || q.RefID == "" || refs[q.RefID] {
				t.Errorf("panel %q: a query without an expression or with an empty or repeated refId %q", p.Title, q.RefID)
			}
			refs[q.RefID] = true
			for _, m := range dashboardVar.FindAllStringSubmatch(q.Expr, -1) {
				if _, ok := vars[m[1]]; !ok && !strings.HasPrefix(m[1], "__") {
					t.Errorf("panel %q uses $%s, which the dashboard does not define", p.Title, m[1])
				}
			}
		}
	}
	if queries < 20 {
		t.Errorf("found only %d queries in the dashboard", queries)
	}
}

// dashboardQueries returns every PromQL expression of the dashboard, its
// variables' queries included, by where it is.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	d := loadDashboard(t)
	exprs := map[string]string{}
	for _, p := range allPanels(d.Panels) {
		for _, q := range p.Targets {
			exprs[fmt.Sprintf("%s: panel %q, query %s", dashboardFile, p.Title, q.RefID)] = q.Expr
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			exprs[fmt.Sprintf("%s: variable %s", dashboardFile, v.Name)] = v.Definition
		}
	}
	return exprs
}

// alertRule is one rule of a rule file.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func loadRules(t *testing.T) []alertRule {
	t.Helper()
	docs := decodeFile(t, filepath.Join(repoRoot, rulesFile))
	if len(docs) != 1 {
		t.Fatalf("%s: want one document, got %d", rulesFile, len(docs))
	}
	var f struct {
		Groups []struct {
			Name  string      `yaml:"name"`
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeInto(t, docs[0], &f)
	var rules []alertRule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s holds no rules", rulesFile)
	}
	return rules
}

// TestAlertRules checks what promtool does not: every alert waits with for:,
// has a severity an Alertmanager routes on, and tells the operator what
// happened and what to do.
func TestAlertRules(t *testing.T) {
	names := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		if names[r.Alert] {
			t.Errorf("alert %s is defined twice", r.Alert)
		}
		names[r.Alert] = true
		if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
			t.Errorf("alert %s: for: %q, want a duration: an alert that fires on one evaluation pages for every blip", r.Alert, r.For)
		}
		if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("alert %s: severity %q, want critical, warning or info", r.Alert, s)
		}
		if len(r.Annotations["summary"]) < 20 || len(r.Annotations["description"]) < 100 {
			t.Errorf("alert %s: the summary and the description must say what happened and what to do", r.Alert)
		}
	}
	for _, want := range []string{"A2AGatewayBackendFailureRatioHigh", "A2AGatewayAuthFailureSpike", "A2AGatewayTaskIndexUnreachable", "A2AGatewayConfigReloadFailed", "A2AGatewayLatencyP99High", "A2AGatewayPushDeliveriesFailing", "A2AGatewayPushQueueFull", "A2AGatewayTLSCertificateExpiresSoon"} {
		if !names[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

// TestDashboardAndAlertsQueryExistingMetrics: a metric renamed or a label
// dropped in the gateway fails here, not in an operator's empty panel or
// silent alert. The dashboard also shows every metric the gateway exports.
func TestDashboardAndAlertsQueryExistingMetrics(t *testing.T) {
	families := gatewayMetrics(t)
	shown := map[string]bool{}
	for where, expr := range dashboardQueries(t) {
		for _, name := range checkQuery(t, families, where, expr) {
			shown[name] = true
		}
	}
	for name := range families {
		if !shown[name] {
			t.Errorf("the gateway exports %s, which no panel of %s shows: add one", name, dashboardFile)
		}
	}
	for _, r := range loadRules(t) {
		where := fmt.Sprintf("%s: %s%s", rulesFile, r.Alert, r.Record)
		checkQuery(t, families, where, r.Expr)
		// The queries an annotation tells the operator to run.
		for key, text := range r.Annotations {
			for _, series := range metricRef.FindAllString(text, -1) {
				if _, problem := resolveMetric(families, series); problem != "" {
					t.Errorf("%s, annotation %s: %s", where, key, problem)
				}
			}
		}
	}
}

// TestPromtoolRules runs promtool's own check and the rules' unit tests.
func TestPromtoolRules(t *testing.T) {
	if out, err := runTool(t, "promtool", "check", "rules", rulesFile); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := runTool(t, "promtool", "test", "rules", rulesTestFile); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// renderedObject is the part of a rendered manifest TestHelmMonitoring reads.
type renderedObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name        string            `yaml:"name"`
		Namespace   string            `yaml:"namespace"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec map[string]any    `yaml:"spec"`
}

// TestHelmMonitoring renders the chart's dashboard ConfigMap and
// PrometheusRule: off by default, the rule only where its CRD is, and both
// carrying the files of deploy/ unchanged.
func TestHelmMonitoring(t *testing.T) {
	chart := filepath.Join("deploy", "helm", "a2a-gateway")
	render := func(t *testing.T, args ...string) (dashboards, rules []renderedObject) {
		t.Helper()
		base := []string{"template", "rel", chart, "--kube-version", "1.31.0", "--namespace", "agents", "--set", "gateway.publicURL=https://helpdesk.example.com/"}
		out, err := runTool(t, "helm", slices.Concat(base, args)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range decodeAll(t, out) {
			var o renderedObject
			decodeInto(t, doc, &o)
			switch {
			case o.Kind == "PrometheusRule":
				rules = append(rules, o)
			case o.Kind == "ConfigMap" && o.Data["a2a-gateway-dashboard.json"] != "":
				dashboards = append(dashboards, o)
			}
		}
		return dashboards, rules
	}
	const withCRD = "--api-versions=monitoring.coreos.com/v1/PrometheusRule"

	t.Run("off by default", func(t *testing.T) {
		dashboards, rules := render(t, withCRD)
		if len(dashboards)+len(rules) != 0 {
			t.Errorf("rendered %d dashboard ConfigMaps and %d PrometheusRules without being asked", len(dashboards), len(rules))
		}
	})
	t.Run("enabled", func(t *testing.T) {
		dashboards, rules := render(t, withCRD, "--set", "grafanaDashboard.enabled=true,prometheusRule.enabled=true,prometheusRule.labels.release=kube-prometheus-stack")
		if len(dashboards) != 1 || len(rules) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps and %d PrometheusRules, want one of each", len(dashboards), len(rules))
		}
		cm := dashboards[0]
		if cm.Metadata.Labels["grafana_dashboard"] != "1" || cm.Metadata.Namespace != "agents" {
			t.Errorf("dashboard ConfigMap: labels %v, namespace %q; want grafana_dashboard: \"1\" in the release's namespace", cm.Metadata.Labels, cm.Metadata.Namespace)
		}
		if got := cm.Data["a2a-gateway-dashboard.json"]; got != string(readRepoFile(t, dashboardFile)) {
			t.Errorf("the ConfigMap's dashboard is not %s byte for byte", dashboardFile)
		}
		pr := rules[0]
		if pr.Metadata.Labels["release"] != "kube-prometheus-stack" || pr.Metadata.Labels["app.kubernetes.io/instance"] != "rel" {
			t.Errorf("PrometheusRule labels %v: want prometheusRule.labels beside the chart's", pr.Metadata.Labels)
		}
		want := decodeFile(t, filepath.Join(repoRoot, rulesFile))[0]
		if !reflect.DeepEqual(pr.Spec, want) {
			t.Errorf("the PrometheusRule's spec is not %s:\n%v", rulesFile, pr.Spec)
		}
	})
	t.Run("no CRD", func(t *testing.T) {
		if _, rules := render(t, "--set", "prometheusRule.enabled=true"); len(rules) != 0 {
			t.Errorf("rendered a PrometheusRule where the cluster has no such CRD")
		}
	})
	t.Run("sidecar label and namespace", func(t *testing.T) {
		dashboards, _ := render(t, "--set", "grafanaDashboard.enabled=true,grafanaDashboard.label=dashboards,grafanaDashboard.labelValue=a2a,grafanaDashboard.namespace=monitoring,grafanaDashboard.annotations.grafana_folder=A2A")
		if len(dashboards) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps, want one", len(dashboards))
		}
		m := dashboards[0].Metadata
		if m.Labels["dashboards"] != "a2a" || m.Namespace != "monitoring" || m.Annotations["grafana_folder"] != "A2A" {
			t.Errorf("dashboard ConfigMap: labels %v, annotations %v, namespace %q; want dashboards: a2a, grafana_folder: A2A, in monitoring", m.Labels, m.Annotations, m.Namespace)
		}
	})
}
