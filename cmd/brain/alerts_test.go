package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain"
)

// collecting is a prometheus.Registerer that keeps what is registered.
type collecting struct{ collectors []prometheus.Collector }

func (c *collecting) Register(col prometheus.Collector) error {
	c.collectors = append(c.collectors, col)
	return nil
}
func (c *collecting) MustRegister(cols ...prometheus.Collector) {
	c.collectors = append(c.collectors, cols...)
}
func (c *collecting) Unregister(prometheus.Collector) bool { return false }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// nodeMetrics returns the names of the metrics a node registers (its
// Metrics and the state gauge), as brain serve does.
func nodeMetrics(t *testing.T) []string {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	models, err := newModels(nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	reg := &collecting{}
	node, err := brain.New(brain.Config{Redis: rdb, ResolveModel: models.Resolve, Metrics: brain.NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.RegisterStateGauge(reg); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range reg.collectors {
		descs := make(chan *prometheus.Desc, 16)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("no name in %s", d)
			}
			names = append(names, m[1])
		}
	}
	if len(names) < 10 {
		t.Fatalf("a node registers %d metrics: %q", len(names), names)
	}
	return names
}

// The README names every metric a node serves, so that an operator
// reading it finds what /metrics has.
func TestREADMEListsTheMetrics(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range nodeMetrics(t) {
		if !bytes.Contains(readme, []byte("`"+name)) {
			t.Errorf("the README does not name the metric %s", name)
		}
	}
}

// deploy/prometheus/brain-alerts.yaml parses as Prometheus rule groups
// (no unknown keys), every alert says what it is and what to do, and every
// brain metric its expressions use is one a node serves: renaming a metric
// breaks the alerts here, not silently in someone's Prometheus.
// (promtool is not installed here: the PromQL itself is not parsed.)
func TestDeployAlerts(t *testing.T) {
	t.Parallel()
	type rule struct {
		Alert       string            `yaml:"alert"`
		Expr        string            `yaml:"expr"`
		For         string            `yaml:"for"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "brain-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	served := nodeMetrics(t)
	metric := regexp.MustCompile(`\bbrain_[a-z_]+\b`)
	alerts := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			alerts++
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("group %s: a rule without alert or expr: %+v", g.Name, r)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: want a summary and a description", r.Alert)
			}
			names := metric.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: its expression uses no brain metric: %s", r.Alert, r.Expr)
			}
			for _, name := range names {
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(served, b) {
						base = b
					}
				}
				if !slices.Contains(served, base) {
					t.Errorf("%s: %s is not a metric a node serves (%s)", r.Alert, name, strings.Join(served, ", "))
				}
			}
		}
	}
	if alerts == 0 {
		t.Error("no alerts")
	}
}
