package main

import (
	"bytes"
	"encoding/json"
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
	"github.com/engine-brain/brain/api"
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

// servedMetrics returns the names of the brain_* metrics brain serve's
// /metrics has, registered as brain serve registers them: the binary's
// (metricsRegistry), the node's (its Metrics and the state gauge) and the
// API's. Described rather than scraped: a labelled metric shows in a scrape
// only once something has been counted.
func servedMetrics(t *testing.T) []string {
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
	if _, err := api.New(api.Config{Backend: emptyNode{}, Registerer: reg}); err != nil {
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
	families, err := metricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "brain_") {
			names = append(names, f.GetName())
		}
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
	for _, name := range servedMetrics(t) {
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
	served := servedMetrics(t)
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
			checkExpr(t, r.Alert, r.Expr, served)
		}
	}
	if alerts == 0 {
		t.Error("no alerts")
	}
	if t.Failed() {
		t.Logf("a node serves %s", strings.Join(served, ", "))
	}
}

var (
	brainMetric = regexp.MustCompile(`\bbrain_[a-z_]+\b`)
	// scrapeUp is Prometheus's own series of whether it reached a node.
	scrapeUp = regexp.MustCompile(`\bup\{job="brain"\}`)
)

// checkExpr checks that the PromQL expr, of where, is about brain and
// names only metrics a node serves (a histogram by its _bucket, _sum and
// _count series).
func checkExpr(t *testing.T, where, expr string, served []string) {
	t.Helper()
	names := brainMetric.FindAllString(expr, -1)
	if len(names) == 0 && !scrapeUp.MatchString(expr) {
		t.Errorf("%s: its expression uses no brain metric: %s", where, expr)
	}
	for _, name := range names {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(served, b) {
				base = b
			}
		}
		if !slices.Contains(served, base) {
			t.Errorf("%s: %s is not a metric a node serves", where, name)
		}
	}
}

// deploy/grafana/brain-dashboard.json is a Grafana dashboard whose every
// panel queries the Prometheus its datasource variable picks, and every
// brain metric its queries use is one a node serves, as for the alerts.
func TestDeployDashboard(t *testing.T) {
	t.Parallel()
	type target struct {
		Expr       string `json:"expr"`
		RefID      string `json:"refId"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	}
	type variable struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Query string `json:"query"`
	}
	type panel struct {
		ID      int      `json:"id"`
		Type    string   `json:"type"`
		Title   string   `json:"title"`
		Targets []target `json:"targets"`
	}
	var dash struct {
		UID        string  `json:"uid"`
		Title      string  `json:"title"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []variable `json:"list"`
		} `json:"templating"`
	}
	data, err := os.ReadFile(filepath.Join(deployDir, "grafana", "brain-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Errorf("the dashboard has uid %q, title %q: want both", dash.UID, dash.Title)
	}
	hasDatasource := slices.ContainsFunc(dash.Templating.List, func(v variable) bool {
		return v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	})
	if !hasDatasource {
		t.Error("no datasource variable of type prometheus: the dashboard would not import into another Grafana")
	}
	served := servedMetrics(t)
	ids, titles := map[int]bool{}, map[string]bool{}
	queries := 0
	for _, p := range dash.Panels {
		if ids[p.ID] || titles[p.Title] {
			t.Errorf("panel %d %q: its id or title is another panel's", p.ID, p.Title)
		}
		ids[p.ID], titles[p.Title] = true, true
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %d: want a title and queries (got %q, %d)", p.ID, p.Title, len(p.Targets))
		}
		for _, q := range p.Targets {
			queries++
			if q.Datasource.UID != "${datasource}" {
				t.Errorf("%s: query %s asks datasource %q, want ${datasource}", p.Title, q.RefID, q.Datasource.UID)
			}
			checkExpr(t, p.Title, q.Expr, served)
		}
	}
	if queries == 0 {
		t.Error("no queries")
	}
	if t.Failed() {
		t.Logf("a node serves %s", strings.Join(served, ", "))
	}
}
