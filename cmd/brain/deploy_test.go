package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/web"
)

// The files of deploy/ start `brain serve` with settings of their own. The
// tests here hold them to the binary and to each other, so that a renamed
// flag, a moved probe or a new Go version fails here rather than in
// someone's cluster. (No Docker engine or cluster runs here: what the files
// mean to brain is checked, not that Docker or Kubernetes accept them.)

const deployDir = "../../deploy"

// deployedServe is how one file of deploy/ starts brain serve.
type deployedServe struct {
	file string
	args []string          // what follows "serve"
	env  map[string]string // what the file sets, secrets given sample values
	port string            // the port it exposes the API on
	// metricsPort is the port it exposes /metrics on when that is not the
	// API's.
	metricsPort string
	// needsRedis: the file must point brain at a Redis server (it runs
	// several nodes, or one that must keep its state).
	needsRedis bool
	// stopGrace is how long the file's supervisor waits after asking brain
	// to stop before it kills it, preStop included (0: the file does not
	// say); preStop is how long it waits before sending SIGTERM.
	stopGrace, preStop time.Duration
}

// sampleRedisURL stands for a Redis URL that a deploy file takes from a
// secret.
const sampleRedisURL = "redis://redis.example:6379/0"

func readDeployFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dockerfileServe reads the Dockerfile's ENTRYPOINT, CMD and EXPOSE, and
// checks that its Go is go.mod's and that it runs the binary it copies.
func dockerfileServe(t *testing.T) deployedServe {
	t.Helper()
	var entrypoint, cmd []string
	var goImage, copied, port string
	env := map[string]string{}
	for line := range strings.Lines(string(readDeployFile(t, "Dockerfile"))) {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch instr {
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("Dockerfile: ENV %s: want the KEY=value form", rest)
				}
				env[k] = v
			}
		case "FROM":
			if img, ok := strings.CutPrefix(rest, "golang:"); ok {
				goImage, _, _ = strings.Cut(img, " ")
			}
		case "COPY":
			if f := strings.Fields(rest); f[0] == "--from=build" {
				copied = f[len(f)-1]
			}
		case "EXPOSE":
			port = rest
		case "ENTRYPOINT", "CMD":
			var v []string
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Fatalf("Dockerfile: %s %s: %v (want the JSON form)", instr, rest, err)
			}
			if instr == "CMD" {
				cmd = v
			} else {
				entrypoint = v
			}
		}
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var goVersion string
	for line := range strings.Lines(string(mod)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			goVersion = strings.Join(strings.Split(v, ".")[:2], ".") // 1.26.0 -> 1.26
		}
	}
	if goImage != goVersion && !strings.HasPrefix(goImage, goVersion+"-") {
		t.Errorf("Dockerfile builds with golang:%s, go.mod says go %s", goImage, goVersion)
	}
	if len(entrypoint) != 1 || entrypoint[0] != copied {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want the binary it copies, %q", entrypoint, copied)
	}
	if len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("Dockerfile: CMD %q, want serve and its flags", cmd)
	}
	return deployedServe{file: "Dockerfile", args: cmd[1:], env: env, port: port}
}

// composeServe reads the brain service of a compose file (compose.yaml,
// compose.cluster.yaml) and checks that its image is the Dockerfile's and
// that its Redis servers run with redis.conf.
func composeServe(t *testing.T, file string) deployedServe {
	t.Helper()
	type service struct {
		Build struct {
			Context, Dockerfile string
		}
		Command         []string
		Environment     map[string]string
		Ports           []string
		Volumes         []string
		StopGracePeriod string `yaml:"stop_grace_period"`
	}
	var f struct {
		Services map[string]service
	}
	if err := yaml.Unmarshal(readDeployFile(t, file), &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b := f.Services["brain"]
	if got := filepath.Join(deployDir, b.Build.Context, b.Build.Dockerfile); got != filepath.Join(deployDir, "Dockerfile") {
		t.Errorf("%s: brain is built from %s, want deploy/Dockerfile", file, got)
	}
	servers := 0
	for name, r := range f.Services {
		if len(r.Command) == 0 || r.Command[0] != "redis-server" {
			continue
		}
		servers++
		confMounted := false
		for _, v := range r.Volumes {
			if src, dst, _ := strings.Cut(v, ":"); src == "./redis.conf" {
				dst, _, _ = strings.Cut(dst, ":")
				confMounted = len(r.Command) > 1 && r.Command[1] == dst
			}
		}
		if !confMounted {
			t.Errorf("%s: %s does not run with deploy/redis.conf (command %q, volumes %q)", file, name, r.Command, r.Volumes)
		}
	}
	if servers == 0 {
		t.Errorf("%s: no service runs redis-server", file)
	}
	if len(b.Command) == 0 || b.Command[0] != "serve" || len(b.Ports) != 1 {
		t.Fatalf("%s: brain: command %q, ports %q: want serve and its flags, one port", file, b.Command, b.Ports)
	}
	// host:hostPort:containerPort. The API it starts is open: the host
	// must publish it on loopback only.
	hostIP, ports, _ := strings.Cut(b.Ports[0], ":")
	_, containerPort, _ := strings.Cut(ports, ":")
	if slices.Contains(b.Command, "--insecure-open") && !net.ParseIP(hostIP).IsLoopback() {
		t.Errorf("%s: an open API published on %s, want the host's loopback", file, b.Ports[0])
	}
	stopGrace, err := time.ParseDuration(b.StopGracePeriod)
	if err != nil {
		t.Errorf("%s: brain: stop_grace_period %q: %v (Docker's default, 10s, is too short)", file, b.StopGracePeriod, err)
	}
	return deployedServe{file: file, args: b.Command[1:], env: b.Environment, port: containerPort, needsRedis: true,
		stopGrace: stopGrace}
}

// kubeServe reads kubernetes/brain.yaml's Deployment and Service, and
// checks that the probes answer and that what is named exists.
func kubeServe(t *testing.T) deployedServe {
	t.Helper()
	type probe struct {
		HTTPGet struct {
			Path string
			Port string
		} `yaml:"httpGet"`
	}
	type container struct {
		Args []string
		Env  []struct {
			Name, Value string
			ValueFrom   *struct {
				SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		}
		Ports []struct {
			Name          string
			ContainerPort int `yaml:"containerPort"`
		}
		ReadinessProbe probe `yaml:"readinessProbe"`
		LivenessProbe  probe `yaml:"livenessProbe"`
		Lifecycle      struct {
			PreStop struct {
				Sleep struct{ Seconds int }
			} `yaml:"preStop"`
		}
		VolumeMounts []struct {
			Name      string
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	type doc struct {
		Kind string
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string
				}
				Spec struct {
					Containers                    []container
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				}
			}
			Ports []struct {
				TargetPort string `yaml:"targetPort"`
			}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(readDeployFile(t, "kubernetes/brain.yaml")))
	var deployment, service *doc
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("kubernetes/brain.yaml: %v", err)
		}
		switch d.Kind {
		case "Deployment":
			deployment = &d
		case "Service":
			service = &d
		}
	}
	if deployment == nil || service == nil || len(deployment.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("kubernetes/brain.yaml: want a Deployment of one container and a Service")
	}
	c := deployment.Spec.Template.Spec.Containers[0]
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if len(c.Args) == 0 || c.Args[0] != "serve" || ports["http"] == 0 {
		t.Fatalf("kubernetes/brain.yaml: args %q, ports %v: want serve and its flags, a port named http", c.Args, ports)
	}
	// Prometheus finds the metrics where the annotations say.
	metricsPort := ""
	if ports["metrics"] != 0 {
		metricsPort = strconv.Itoa(ports["metrics"])
		if a := deployment.Spec.Template.Metadata.Annotations; a["prometheus.io/port"] != metricsPort || a["prometheus.io/path"] != "/metrics" {
			t.Errorf("kubernetes/brain.yaml: prometheus annotations %v, want port %s, path /metrics", a, metricsPort)
		}
	}
	for _, p := range []probe{c.ReadinessProbe, c.LivenessProbe} {
		if p.HTTPGet.Port != "http" {
			t.Errorf("kubernetes/brain.yaml: a probe on port %q, want http", p.HTTPGet.Port)
		}
		checkProbe(t, p.HTTPGet.Path)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("kubernetes/brain.yaml: readiness on %s, liveness on %s: want /readyz (503 while draining) and /healthz (up)",
			c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	// The Service stops sending new requests a moment after the pod starts
	// stopping; a preStop sleep keeps brain taking them meanwhile.
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	if preStop == 0 {
		t.Error("kubernetes/brain.yaml: no lifecycle.preStop.sleep: the Service may still send requests once brain has stopped taking them")
	}
	for _, p := range service.Spec.Ports {
		if p.TargetPort != "http" {
			t.Errorf("kubernetes/brain.yaml: the Service targets port %q, want http", p.TargetPort)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.Name == "BRAIN_REDIS" && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = sampleRedisURL
		default:
			t.Errorf("kubernetes/brain.yaml: %s comes from somewhere this test has no sample value for", e.Name)
		}
	}
	if i := slices.Index(c.Args, "--config"); i >= 0 {
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || filepath.Dir(c.Args[i+1]) == m.MountPath
		}
		if !mounted {
			t.Errorf("kubernetes/brain.yaml: --config %s is on no volume mounted", c.Args[i+1])
		}
	}
	return deployedServe{file: "kubernetes/brain.yaml", args: c.Args[1:], env: env, port: strconv.Itoa(ports["http"]),
		metricsPort: metricsPort, needsRedis: true, preStop: preStop,
		stopGrace: time.Duration(deployment.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second}
}

// systemdServe reads brain.service's ExecStart and, when systemd-analyze
// is here, has systemd check the unit.
func systemdServe(t *testing.T) deployedServe {
	t.Helper()
	unit := string(readDeployFile(t, "brain.service"))
	var exec []string
	env := map[string]string{}
	var stopGrace time.Duration
	for line := range strings.Lines(unit) {
		key, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch key {
		case "ExecStart":
			exec = strings.Fields(v)
		case "Environment":
			for _, kv := range strings.Fields(v) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		case "TimeoutStopSec":
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Errorf("brain.service: TimeoutStopSec=%s: want a duration like 30s (%v)", v, err)
			}
			stopGrace = d
		}
	}
	if len(exec) < 2 || exec[1] != "serve" {
		t.Fatalf("brain.service: ExecStart %q, want brain serve and its flags", exec)
	}
	verifyUnit(t, strings.Replace(unit, "ExecStart="+exec[0], "ExecStart="+testBinary(t), 1))
	return deployedServe{file: "brain.service", args: exec[2:], env: env, port: "8080", stopGrace: stopGrace}
}

// verifyUnit runs systemd-analyze verify on unit, which must say nothing.
// The binary is the test's, as the installed one is not here.
func verifyUnit(t *testing.T, unit string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: brain.service is not verified by systemd")
		return
	}
	path := filepath.Join(t.TempDir(), "brain.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify brain.service: %v\n%s", err, out)
	}
}

func testBinary(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkProbe checks that path answers 200 on brain serve's handler, with a
// backend that is ready.
func checkProbe(t *testing.T, path string) {
	t.Helper()
	h, err := api.New(api.Config{Backend: readyNode{}})
	if err != nil {
		t.Fatal(err)
	}
	console, err := web.New(web.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mount(h, console).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != http.StatusOK {
		t.Errorf("probe %s: %d %s, want 200", path, rec.Code, rec.Body)
	}
}

// readyNode is a backend whose Redis answers, with the built-in recipes.
type readyNode struct{ emptyNode }

func (readyNode) Recipes() *recipes.Library { return recipes.Builtin() }

// TestDeployServe starts the settings of each deploy file as brain serve
// would read them: flags and environment variables it knows, an API it
// serves (with the tokens of the config file the file names), on the port
// the file exposes, and a Redis server where one is needed.
func TestDeployServe(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "brain.yaml")
	conf := "auth:\n  tokens:\n    - {name: ops, role: operator, sha256: " + api.HashToken("t0ken") + "}\n"
	if err := os.WriteFile(tokens, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []deployedServe{dockerfileServe(t), composeServe(t, "compose.yaml"), composeServe(t, "compose.cluster.yaml"), kubeServe(t), systemdServe(t)} {
		args := slices.Clone(d.args)
		env := maps.Clone(d.env)
		if i := slices.Index(args, "--config"); i >= 0 {
			args[i+1] = tokens // the file it names, with tokens
		} else if d.file == "Dockerfile" {
			env["BRAIN_CONFIG"] = tokens // as `docker run -e BRAIN_CONFIG=...` gives one
		}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		cfg, err := loadServeConfig(args, lookup, io.Discard)
		if err != nil {
			t.Errorf("%s: brain serve %q: %v", d.file, args, err)
			continue
		}
		if _, err := checkOpenMode(cfg.Listen, len(cfg.Tokens), cfg.InsecureOpen); err != nil {
			t.Errorf("%s: %v", d.file, err)
		}
		if _, port, _ := net.SplitHostPort(cfg.Listen); port != d.port {
			t.Errorf("%s: brain serves on %s, the file exposes port %s", d.file, cfg.Listen, d.port)
		}
		if _, port, _ := net.SplitHostPort(cfg.MetricsListen); port != d.metricsPort {
			t.Errorf("%s: brain serves /metrics on %q, the file exposes it on port %q", d.file, cfg.MetricsListen, d.metricsPort)
		}
		if d.needsRedis && cfg.Redis == embeddedRedis {
			t.Errorf("%s: brain keeps its state in the embedded Redis, lost on exit", d.file)
		}
		// A log collector reads JSON lines.
		if cfg.Log.Format != "json" {
			t.Errorf("%s: brain logs in the %s format, want json", d.file, cfg.Log.Format)
		}
		if d.stopGrace != 0 && d.stopGrace-d.preStop <= stopTimeout {
			t.Errorf("%s: brain is killed %s after SIGTERM, within the %s it may take to stop", d.file, d.stopGrace-d.preStop, stopTimeout)
		}
	}
	// Without a config file, the image's command serves nothing open
	// beyond loopback.
	d := dockerfileServe(t)
	cfg, err := loadServeConfig(d.args, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkOpenMode(cfg.Listen, len(cfg.Tokens), cfg.InsecureOpen); err == nil {
		t.Error("Dockerfile: without tokens, its command serves an open API beyond loopback")
	}
}

// TestDeployRedisConf starts a redis-server with deploy/redis.conf and
// reads what brain needs of it.
func TestDeployRedisConf(t *testing.T) {
	t.Parallel()
	conf, err := filepath.Abs(filepath.Join(deployDir, "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := testutil.StartRedisWith(t, redisserver.Options{ConfigFile: conf}).Client(t)
	ctx := context.Background()
	p, err := redisinfo.ReadPersistence(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if !p.AOF || p.Fsync != "everysec" {
		t.Errorf("redis.conf: %v, want an append-only file fsynced every second", p)
	}
	e, err := redisinfo.ReadEviction(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Safe() {
		t.Errorf("redis.conf: %v, want maxmemory-policy noeviction", e)
	}
	// Said in the file, not left to defaults: a file included into another
	// config overrides only what it says, and managed services' defaults
	// are not Redis's.
	said := map[string]string{}
	for line := range strings.Lines(string(readDeployFile(t, "redis.conf"))) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && !strings.HasPrefix(k, "#") {
			said[k] = v
		}
	}
	for k, v := range map[string]string{"appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction"} {
		if said[k] != v {
			t.Errorf("redis.conf says %s %q, want %q", k, said[k], v)
		}
	}
}

// TestDeployComposeCluster holds compose.cluster.yaml's Redis Cluster to
// what brain and Redis need: six nodes in cluster mode with redis.conf
// (started here, with the same settings, to see redis-server take them),
// each at a fixed address on the network (CLUSTER MEET takes addresses,
// not names); a one-shot service that joins exactly those nodes, 3
// masters with a replica each, once they answer; and brain seeded with
// nodes of the file, on their network, started once the cluster is made.
func TestDeployComposeCluster(t *testing.T) {
	t.Parallel()
	const file = "compose.cluster.yaml"
	type service struct {
		Command     []string
		Environment map[string]string
		Healthcheck *struct{ Test []string }
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
		Networks    yaml.Node
	}
	var f struct {
		Services map[string]service
		Networks map[string]struct {
			IPAM struct{ Config []struct{ Subnet string } } `yaml:"ipam"`
		}
	}
	if err := yaml.Unmarshal(readDeployFile(t, file), &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(f.Networks) != 1 {
		t.Fatalf("%s: networks %v, want the cluster's one", file, f.Networks)
	}
	var network string
	var subnet *net.IPNet
	for name, n := range f.Networks {
		network = name
		if len(n.IPAM.Config) != 1 {
			t.Fatalf("%s: network %s: want one subnet, for the nodes' fixed addresses", file, name)
		}
		var err error
		if _, subnet, err = net.ParseCIDR(n.IPAM.Config[0].Subnet); err != nil {
			t.Fatalf("%s: network %s: %v", file, name, err)
		}
	}
	// onNetwork is whether a service is on the network, and its fixed
	// address there ("" when it has none).
	onNetwork := func(name string, s service) (bool, string) {
		switch s.Networks.Kind {
		case yaml.SequenceNode:
			var names []string
			if err := s.Networks.Decode(&names); err != nil {
				t.Fatalf("%s: %s: networks: %v", file, name, err)
			}
			return slices.Contains(names, network), ""
		case yaml.MappingNode:
			var nets map[string]struct {
				IPv4 string `yaml:"ipv4_address"`
			}
			if err := s.Networks.Decode(&nets); err != nil {
				t.Fatalf("%s: %s: networks: %v", file, name, err)
			}
			n, ok := nets[network]
			return ok, n.IPv4
		}
		return false, ""
	}

	nodes := map[string]string{} // service -> its address:6379
	var conf []string            // the nodes' settings beyond redis.conf, as lines of a config file
	for name, s := range f.Services {
		if len(s.Command) == 0 || s.Command[0] != "redis-server" {
			continue
		}
		if on, ip := onNetwork(name, s); !on || !subnet.Contains(net.ParseIP(ip)) {
			t.Errorf("%s: node %s has address %q on %s, want a fixed one in %s", file, name, ip, network, subnet)
		} else {
			nodes[name] = net.JoinHostPort(ip, "6379")
		}
		if s.Healthcheck == nil || !slices.Contains(s.Healthcheck.Test, "ping") {
			t.Errorf("%s: node %s has no health check that pings it", file, name)
		}
		var lines []string
		for i := 2; i+1 < len(s.Command); i += 2 {
			lines = append(lines, strings.TrimPrefix(s.Command[i], "--")+" "+s.Command[i+1])
		}
		if conf == nil {
			conf = lines
		} else if !slices.Equal(conf, lines) {
			t.Errorf("%s: node %s runs with %q, another with %q", file, name, lines, conf)
		}
	}
	if len(nodes) != 6 || !slices.Contains(conf, "cluster-enabled yes") {
		t.Fatalf("%s: nodes %v with %q; want 6 in cluster mode", file, nodes, conf)
	}

	// The one-shot service that joins them.
	var create service
	var createName string
	for name, s := range f.Services {
		if strings.Contains(strings.Join(s.Command, " "), "--cluster create") {
			create, createName = s, name
		}
	}
	if createName == "" {
		t.Fatalf("%s: no service runs redis-cli --cluster create", file)
	}
	script := strings.Join(create.Command, " ")
	_, args, _ := strings.Cut(script, "--cluster create")
	var joined []string
	for _, a := range strings.Fields(strings.ReplaceAll(args, "\\\n", " ")) {
		if _, _, err := net.SplitHostPort(a); err == nil {
			joined = append(joined, a)
		}
	}
	slices.Sort(joined)
	if want := slices.Sorted(maps.Values(nodes)); !slices.Equal(joined, want) {
		t.Errorf("%s: %s joins %v, want the nodes' addresses %v", file, createName, joined, want)
	}
	if !strings.Contains(args, "--cluster-replicas 1") || !strings.Contains(args, "--cluster-yes") {
		t.Errorf("%s: %s: want 3 masters with a replica each, without asking (--cluster-replicas 1 --cluster-yes): %s", file, createName, args)
	}
	for name := range nodes {
		if c := create.DependsOn[name].Condition; c != "service_healthy" {
			t.Errorf("%s: %s starts on %s's condition %q, want service_healthy", file, createName, name, c)
		}
	}
	if on, _ := onNetwork(createName, create); !on {
		t.Errorf("%s: %s is not on %s", file, createName, network)
	}

	// brain: seeded with nodes of the file, on their network, once the
	// cluster is made.
	b := f.Services["brain"]
	target, err := parseRedisURL(b.Environment["BRAIN_REDIS"])
	if err != nil || target.cluster == nil {
		t.Fatalf("%s: brain's BRAIN_REDIS %q: %+v, %v; want a redis+cluster:// URL", file, b.Environment["BRAIN_REDIS"], target, err)
	}
	for _, seed := range target.cluster.Addrs {
		if host, port, _ := net.SplitHostPort(seed); nodes[host] == "" || port != "6379" {
			t.Errorf("%s: brain's seed %s is not a node of the file", file, seed)
		}
	}
	if c := b.DependsOn[createName].Condition; c != "service_completed_successfully" {
		t.Errorf("%s: brain starts on %s's condition %q, want service_completed_successfully", file, createName, c)
	}
	if on, _ := onNetwork("brain", b); !on {
		t.Errorf("%s: brain is not on %s, where the cluster tells its nodes' addresses", file, network)
	}

	// redis-server takes the nodes' settings, with redis.conf.
	redisConf, err := filepath.Abs(filepath.Join(deployDir, "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	nodeConf := filepath.Join(t.TempDir(), "node.conf")
	if err := os.WriteFile(nodeConf, []byte("include "+redisConf+"\n"+strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rdb := testutil.StartRedisWith(t, redisserver.Options{ConfigFile: nodeConf}).Client(t)
	ctx := context.Background()
	if on, err := redisinfo.ClusterEnabled(ctx, rdb); err != nil || !on {
		t.Errorf("%s: a node in cluster mode: %v, %v", file, on, err)
	}
	if p, err := redisinfo.ReadPersistence(ctx, rdb); err != nil || !p.AOF {
		t.Errorf("%s: a node's persistence: %v, %v; want redis.conf's append-only file", file, p, err)
	}
	if e, err := redisinfo.ReadEviction(ctx, rdb); err != nil || !e.Safe() {
		t.Errorf("%s: a node's eviction: %v, %v; want redis.conf's noeviction", file, e, err)
	}
}
