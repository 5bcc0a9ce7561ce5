package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func setup(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestAssets(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	tests := []struct {
		path, ctype, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script src="/console/app.js" defer></script>`},
		{"/console/app.js", "text/javascript; charset=utf-8", "'use strict';"},
		{"/console/app.css", "text/css; charset=utf-8", ".chat"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			res, body := get(t, srv.URL+tt.path)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", tt.path, res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("GET %s: Content-Type %q, want %q", tt.path, got, tt.ctype)
			}
			if !strings.Contains(body, tt.contains) {
				t.Errorf("GET %s: body lacks %q", tt.path, tt.contains)
			}
			checkHeaders(t, res)
		})
	}
}

// checkHeaders checks the security headers every answer carries.
func checkHeaders(t *testing.T, res *http.Response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q allows inline code", csp)
	}
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
}

// TestPageHasNoInlineCode checks that the page works under its policy: no
// inline script, no inline style, no event handler attributes.
func TestPageHasNoInlineCode(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	_, body := get(t, srv.URL+"/")
	for _, bad := range []string{"<script>", "<style", "style=", "onclick=", "onload=", "javascript:"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("the page has %d script elements, want 1 (app.js)", n)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, path := range []string{"/console/nope.js", "/console/index.html", "/elsewhere", "/console/"} {
		res, _ := get(t, srv.URL+path)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, res.StatusCode)
		}
		checkHeaders(t, res)
	}
}

func postMarkdown(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url+"/console/api/markdown", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func renderVia(t *testing.T, url, md string) string {
	t.Helper()
	req, _ := json.Marshal(MarkdownRequest{Markdown: md})
	res, body := postMarkdown(t, url, string(req))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", res.StatusCode, body)
	}
	if got := res.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	checkHeaders(t, res)
	var out MarkdownResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out.HTML
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	tests := []struct {
		name, md string
		want     []string // substrings of the HTML
		never    []string // substrings it must not hold (compared lowercased)
	}{
		{
			name: "GFM table",
			md:   "| Type | Count |\n|---|---:|\n| JPEG (image/jpeg) | 81 |\n| PNG (image/png) | 20 |\n",
			want: []string{"<table>", "<th>Type</th>", "<td>JPEG (image/jpeg)</td>", `<td style="text-align:right">81</td>`},
		},
		{
			name:  "script element",
			md:    "before\n\n<script>alert(1)</script>\n\nafter <script>alert(2)</script>",
			want:  []string{"before", "after"},
			never: []string{"<script", "alert(1)</script>"},
		},
		{
			name:  "javascript link",
			md:    "[x](javascript:alert(1)) and [y](JaVaScRiPt:alert(1)) and [z](java&#115;cript:alert(1))",
			want:  []string{"x", "y", "z"},
			never: []string{"href", "javascript:"},
		},
		{
			name:  "image with a handler",
			md:    `<img src=x onerror=alert(1)> and inline <img src=x onerror="alert(1)">`,
			never: []string{"<img", "onerror"},
		},
		{
			name:  "other schemes",
			md:    "[d](data:text/html;base64,PHNjcmlwdD4=) [m](mailto:a@b.c) [p](//evil.example/x) ![i](data:image/png;base64,AAAA) <vbscript:x> a@b.c",
			never: []string{"href", "<img", "src="},
		},
		{
			name: "safe links",
			md:   "[doc](https://example.com/a?b=1) [app](/app/media?filter=x) https://www.example.org",
			want: []string{`href="https://example.com/a?b=1"`, `href="/app/media?filter=x"`, `href="https://www.example.org"`, `rel="nofollow noopener noreferrer"`},
		},
		{
			name:  "escaped label",
			md:    "a **bold** <b>tag</b> & `<i>code</i>`",
			want:  []string{"<strong>bold</strong>", "&amp;", "<code>&lt;i&gt;code&lt;/i&gt;</code>"},
			never: []string{"<b>", "<i>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := renderVia(t, srv.URL, tt.md)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("HTML lacks %q:\n%s", w, got)
				}
			}
			low := strings.ToLower(got)
			for _, n := range tt.never {
				if strings.Contains(low, n) {
					t.Errorf("HTML holds %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestMarkdownBadRequests(t *testing.T) {
	t.Parallel()
	h, err := New(Config{MaxMarkdown: 64})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tests := []struct {
		name, body string
		status     int
	}{
		{"not JSON", "# hi", http.StatusBadRequest},
		{"too big", `{"markdown": "` + strings.Repeat("a", 100) + `"}`, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		res, body := postMarkdown(t, srv.URL, tt.body)
		if res.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, res.StatusCode, tt.status, body)
		}
	}
	res, err := http.Get(srv.URL + "/console/api/markdown")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /console/api/markdown: status %d, want 405", res.StatusCode)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{MaxMarkdown: -1}); err == nil || !strings.Contains(err.Error(), "MaxMarkdown") {
		t.Errorf("New(MaxMarkdown: -1): error %v, want one naming MaxMarkdown", err)
	}
}

func TestSafeURL(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"https://example.com":      true,
		"http://example.com/a?b=c": true,
		"/app/media?filter=x":      true,
		"/":                        true,
		"":                         false,
		"https://":                 false,
		"//evil.example":           false,
		"/\\evil.example":          false,
		"javascript:alert(1)":      false,
		"JAVASCRIPT:alert(1)":      false,
		" javascript:alert(1)":     false,
		"data:text/html,x":         false,
		"mailto:a@b.c":             false,
		"relative/path":            false,
		"ftp://example.com":        false,
	}
	for u, want := range tests {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestScriptInsertsNoModelMarkup guards the script's one rule: markup is
// inserted only where the server's markdown renderer produced it.
func TestScriptInsertsNoModelMarkup(t *testing.T) {
	t.Parallel()
	b, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	if n := strings.Count(js, "innerHTML"); n != 1 {
		t.Errorf("app.js uses innerHTML %d times, want 1 (the server-rendered markdown)", n)
	}
	if !strings.Contains(js, "target.innerHTML = out.html;") {
		t.Error("app.js: innerHTML is not the markdown renderer's output")
	}
	for _, bad := range []string{"outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// The console shows a phased process's pipeline (GET /v1/processes/{id}'s
// pipeline): its phases, the current one marked, the passed ones' results.
func TestPipelineUI(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	tests := []struct {
		path string
		want []string
	}{
		{"/", []string{`id="p-pipeline"`}},
		{"/console/app.js", []string{"showPipeline(p.pipeline)", "ph.name === pl.phase ? ' current'", "JSON.stringify(ph.result, null, 2)"}},
		{"/console/app.css", []string{".pipeline .phase.current", ".pipeline pre.result"}},
	}
	for _, tt := range tests {
		_, body := get(t, srv.URL+tt.path)
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: body lacks %q", tt.path, w)
			}
		}
	}
}

// TestApprovalUI checks that the console has what tool approvals need: the
// badge and the list of waiting calls on the page, and a script that reads
// the API's fields, posts decisions and names the log's approval events.
func TestApprovalUI(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	tests := []struct {
		path string
		want []string
	}{
		{"/", []string{`id="p-waiting"`, `id="p-approvals"`, `id="p-approvals-note"`}},
		{"/console/app.js", []string{
			"p.waiting_for === 'approval'", "p.approvals", "'/approvals/'", "b.dataset.decision = decision",
			"case 'approval_requested':", "case 'approval_decided':", "'approval requested: '",
		}},
		{"/console/app.css", []string{".badge.waiting", ".approval pre.args", "input.reason.needed"}},
	}
	for _, tt := range tests {
		_, body := get(t, srv.URL+tt.path)
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: body lacks %q", tt.path, w)
			}
		}
	}
}
