package httpfetch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-brain/brain/tools"
	"github.com/google/go-cmp/cmp"
)

// pngHeader is the start of every PNG file, enough for content sniffing.
const pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

// fetchServer starts a test server of the pages the http_fetch tests read.
func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(path, contentType string, status int, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			if contentType == "" {
				w.Header()["Content-Type"] = nil // no header, and no sniffing by the server
			} else {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		})
	}
	page("/text", "text/plain; charset=utf-8", http.StatusOK, "Hello, world.")
	page("/json", "application/json; charset=utf-8", http.StatusOK, `{"answer": 42}`)
	page("/problem", "application/problem+json", http.StatusOK, `{"title": "x"}`)
	page("/feed", "application/atom+xml", http.StatusOK, `<feed/>`)
	page("/xml", "application/xml", http.StatusOK, `<a/>`)
	page("/html", "text/html; charset=utf-8", http.StatusOK, "<html><body><p>Hi</p></body></html>")
	page("/unicode", "text/plain; charset=utf-8", http.StatusOK, "héllo wörld")
	page("/latin1", "text/plain; charset=ISO-8859-1", http.StatusOK, "caf\xe9 cr\xe8me")
	page("/cp1252-html", "text/html", http.StatusOK, "<p>caf\xe9 \x80 5</p>") // no charset: a browser's guess
	page("/sjis-meta", "text/html", http.StatusOK, "<meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b</p>")
	page("/utf8-html", "text/html", http.StatusOK, "<p>café</p>")
	page("/long", "text/plain", http.StatusOK, strings.Repeat("a", 20001))
	page("/huge", "text/plain", http.StatusOK, strings.Repeat("a", maxFetchBody+10))
	page("/huge-euro", "text/plain", http.StatusOK, strings.Repeat("€", maxFetchBody/3+10))
	page("/empty", "text/plain", http.StatusOK, "")
	page("/png", "image/png", http.StatusOK, pngHeader)
	page("/pdf", "application/pdf", http.StatusOK, "%PDF-1.7")
	page("/sniff-png", "", http.StatusOK, pngHeader)
	page("/sniff-text", "", http.StatusOK, "plain words")
	page("/missing", "text/plain", http.StatusNotFound, "no such page\n")
	page("/broken", "text/html", http.StatusInternalServerError, strings.Repeat("x", 600))
	page("/unavailable", "image/png", http.StatusServiceUnavailable, pngHeader)
	page("/gone", "text/plain", http.StatusGone, "")
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.UserAgent())
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port(r.Host)+"/text", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the client gives up
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// port returns the port of a host:port.
func port(hostport string) string {
	_, p, _ := strings.Cut(hostport, ":")
	return p
}

// fetchRegistry returns a registry of http_fetch built from config, which
// fetches through srv's client (closed with srv). A config without
// allow_hosts gets 127.0.0.1, where srv is: without it, http_fetch keeps to
// public addresses (TestHTTPFetchPublicOnly).
func fetchRegistry(t *testing.T, srv *httptest.Server, config map[string]any) *tools.Registry {
	t.Helper()
	if _, ok := config["allow_hosts"]; !ok {
		config = maps.Clone(config)
		if config == nil {
			config = map[string]any{}
		}
		config["allow_hosts"] = []any{"127.0.0.1"}
	}
	tool, err := Factory(srv.Client())(config)
	if err != nil {
		t.Fatalf("Factory: %v", err)
	}
	return mustRegistry(t, tool)
}

func TestHTTPFetch(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	u := srv.URL
	local := map[string]any{"allow_hosts": []any{"127.0.0.1"}}
	tests := []struct {
		name   string
		config map[string]any
		args   string
		want   tools.Result
		// wantErr is whether the tool returned a Go error, which the
		// registry made the error result; wantIs, what it matches.
		wantErr bool
		wantIs  error
	}{
		{
			name: "text",
			args: `{"url":"` + u + `/text"}`,
			want: tools.TextResult("Hello, world."),
		},
		{
			name: "latin-1 declared in the header",
			args: `{"url":"` + u + `/latin1"}`,
			want: tools.TextResult("café crème"),
		},
		{
			name: "html without a charset, not UTF-8: windows-1252",
			args: `{"url":"` + u + `/cp1252-html"}`,
			want: tools.TextResult("café € 5"),
		},
		{
			name: "html declaring shift_jis in a meta tag",
			args: `{"url":"` + u + `/sjis-meta"}`,
			want: tools.TextResult("日本"),
		},
		{
			name: "html without a charset, valid UTF-8",
			args: `{"url":"` + u + `/utf8-html"}`,
			want: tools.TextResult("café"),
		},
		{
			name: "json",
			args: `{"url":"` + u + `/json"}`,
			want: tools.TextResult(`{"answer": 42}`),
		},
		{
			name: "+json",
			args: `{"url":"` + u + `/problem"}`,
			want: tools.TextResult(`{"title": "x"}`),
		},
		{
			name: "+xml",
			args: `{"url":"` + u + `/feed"}`,
			want: tools.TextResult(`<feed/>`),
		},
		{
			name: "xml",
			args: `{"url":"` + u + `/xml"}`,
			want: tools.TextResult(`<a/>`),
		},
		{
			name: "html is returned as text",
			args: `{"url":"` + u + `/html"}`,
			want: tools.TextResult("Hi"),
		},
		{
			name: "no content type, sniffed as text",
			args: `{"url":"` + u + `/sniff-text"}`,
			want: tools.TextResult("plain words"),
		},
		{
			name: "method and user agent",
			args: `{"url":"` + u + `/ua"}`,
			want: tools.TextResult("GET brain-http-fetch/1"),
		},
		{
			name: "empty body",
			args: `{"url":"` + u + `/empty"}`,
			want: tools.TextResult("GET " + u + "/empty: 200 OK, with an empty body"),
		},
		{
			name: "truncated to max_chars characters, not bytes",
			args: `{"url":"` + u + `/unicode","max_chars":5}`,
			want: tools.TextResult("héllo\n\n[truncated: 5 of 11 characters shown]"),
		},
		{
			name: "max_chars as a float with no fraction",
			args: `{"url":"` + u + `/unicode","max_chars":5.0}`,
			want: tools.TextResult("héllo\n\n[truncated: 5 of 11 characters shown]"),
		},
		{
			name: "exactly max_chars",
			args: `{"url":"` + u + `/unicode","max_chars":11}`,
			want: tools.TextResult("héllo wörld"),
		},
		{
			name: "default max_chars",
			args: `{"url":"` + u + `/long"}`,
			want: tools.TextResult(strings.Repeat("a", 20000) + "\n\n[truncated: 20000 of 20001 characters shown]"),
		},
		{
			name: "body over 2 MB",
			args: `{"url":"` + u + `/huge","max_chars":3}`,
			want: tools.TextResult("aaa\n\n[truncated: 3 of more than 2097152 characters shown]"),
		},
		{
			name: "body over 2 MB cut between whole characters",
			args: `{"url":"` + u + `/huge-euro","max_chars":3}`,
			want: tools.TextResult("€€€\n\n[truncated: 3 of more than 699050 characters shown]"),
		},
		{
			name: "not found",
			args: `{"url":"` + u + `/missing"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/missing: 404 Not Found\nno such page"),
		},
		{
			name: "server error quotes 500 characters of the body",
			args: `{"url":"` + u + `/broken"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/broken: 500 Internal Server Error\n"+strings.Repeat("x", 500)+"…"),
		},
		{
			name: "error status with a binary body",
			args: `{"url":"` + u + `/unavailable"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/unavailable: 503 Service Unavailable"),
		},
		{
			name: "error status with an empty body",
			args: `{"url":"` + u + `/gone"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/gone: 410 Gone"),
		},
		{
			name: "binary refused",
			args: `{"url":"` + u + `/png"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/png: content type image/png is not text; http_fetch returns only text (text/*, JSON, XML)"),
		},
		{
			name: "pdf refused",
			args: `{"url":"` + u + `/pdf"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/pdf: content type application/pdf is not text; http_fetch returns only text (text/*, JSON, XML)"),
		},
		{
			name: "no content type, sniffed as binary",
			args: `{"url":"` + u + `/sniff-png"}`,
			want: tools.ErrorResult("%s", "GET "+u+"/sniff-png: content type image/png is not text; http_fetch returns only text (text/*, JSON, XML)"),
		},
		{
			name: "5 redirects followed",
			args: `{"url":"` + u + `/redirect/5"}`,
			want: tools.TextResult("arrived"),
		},
		{
			name:    "6 redirects refused",
			args:    `{"url":"` + u + `/redirect/6"}`,
			want:    tools.ErrorResult("%s", "GET "+u+"/redirect/6: stopped after 5 redirects (the next to "+u+"/redirect/0); fetch the final URL directly"),
			wantErr: true,
		},
		{
			name:   "allowed host",
			config: local,
			args:   `{"url":"` + u + `/text"}`,
			want:   tools.TextResult("Hello, world."),
		},
		{
			name:    "host not allowed",
			config:  map[string]any{"allow_hosts": []any{"Example.com", "api.github.com"}},
			args:    `{"url":"` + u + `/text"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": host 127.0.0.1 is not allowed; http_fetch may fetch only from api.github.com, example.com`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "redirect to a host not allowed",
			config:  local,
			args:    `{"url":"` + u + `/away"}`,
			want:    tools.ErrorResult("%s", "GET "+u+"/away: redirected to http://localhost:"+port(strings.TrimPrefix(u, "http://"))+"/text, which http_fetch refuses: host localhost is not allowed; http_fetch may fetch only from 127.0.0.1"),
			wantErr: true,
		},
		{
			name:    "timeout",
			config:  map[string]any{"timeout": "20ms"},
			args:    `{"url":"` + u + `/hang"}`,
			want:    tools.ErrorResult("%s", "GET "+u+"/hang: no complete response within 20ms; try again later or a smaller resource"),
			wantErr: true,
			wantIs:  context.DeadlineExceeded,
		},
		{
			name:    "ftp",
			args:    `{"url":"ftp://example.com/file.txt"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": ftp://example.com/file.txt is not an http or https URL; write an absolute URL such as "https://example.com/page"`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "file",
			args:    `{"url":"file:///etc/passwd"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": file:///etc/passwd is not an http or https URL; write an absolute URL such as "https://example.com/page"`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "no scheme",
			args:    `{"url":"example.com/page"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": example.com/page is not an http or https URL; write an absolute URL such as "https://example.com/page"`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "no host",
			args:    `{"url":"http:///page"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": http:///page is not an http or https URL; write an absolute URL such as "https://example.com/page"`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "not a URL",
			args:    `{"url":"::nope"}`,
			want:    tools.ErrorResult("%s", `http_fetch "url": "::nope" is not a URL; write an absolute URL such as "https://example.com/page"`),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "missing url",
			args:    `{"max_chars":10}`,
			want:    tools.ErrorResult("%s", "invalid arguments for http_fetch: /url: missing required property"),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "max_chars 0",
			args:    `{"url":"` + u + `/text","max_chars":0}`,
			want:    tools.ErrorResult("%s", "invalid arguments for http_fetch: /max_chars: is 0, want at least 1"),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "max_chars over 100000",
			args:    `{"url":"` + u + `/text","max_chars":100001}`,
			want:    tools.ErrorResult("%s", "invalid arguments for http_fetch: /max_chars: is 100001, want at most 100000"),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "max_chars with a fraction",
			args:    `{"url":"` + u + `/text","max_chars":2.5}`,
			want:    tools.ErrorResult("%s", "invalid arguments for http_fetch: /max_chars: got number, want integer"),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
		{
			name:    "unknown property",
			args:    `{"url":"` + u + `/text","headers":{}}`,
			want:    tools.ErrorResult("%s", "invalid arguments for http_fetch: /headers: unknown property (allowed: max_chars, url)"),
			wantErr: true,
			wantIs:  tools.ErrInvalidArguments,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := fetchRegistry(t, srv, tt.config).Invoke(context.Background(), call(tools.HTTPFetch, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("Invoke error = %v, want an error: %t", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Invoke error = %v, want it to match %v", err, tt.wantIs)
			}
		})
	}
}

// TestHTTPFetchCancelled checks that the call's context bounds the fetch
// too: cancelling it ends a fetch the server never answers.
func TestHTTPFetchCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	r := fetchRegistry(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	got, err := r.Invoke(ctx, call(tools.HTTPFetch, `{"url":"`+srv.URL+`"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Invoke error = %v, want it to match context.Canceled", err)
	}
	if want := tools.ErrorResult("GET %s: context canceled", srv.URL); !cmp.Equal(want, got) {
		t.Errorf("Call = %+v, want %+v", got, want)
	}
}

// TestHTTPFetchUnreachable checks a transport failure: an error result
// naming the URL, and the error for the runtime's log.
func TestHTTPFetchUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	r := fetchRegistry(t, srv, nil)
	srv.Close() // nothing listens on its port any more
	got, err := r.Invoke(context.Background(), call(tools.HTTPFetch, `{"url":"`+srv.URL+`/text"}`))
	if err == nil || errors.Is(err, tools.ErrInvalidArguments) {
		t.Errorf("Invoke error = %v, want a transport error", err)
	}
	if !got.IsError || !strings.HasPrefix(got.Text(), "GET "+srv.URL+"/text: ") {
		t.Errorf("Call = %+v, want an error result about GET %s/text", got, srv.URL)
	}
}

// TestHTTPFetchClient checks that http_fetch leaves the client it is given
// unchanged and still applies the client's own redirect policy.
func TestHTTPFetchClient(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error {
		return errors.New("this client follows no redirects")
	}
	tool, err := Factory(&client)(map[string]any{"allow_hosts": []any{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.CheckRedirect(nil, nil); err == nil || err.Error() != "this client follows no redirects" {
		t.Errorf("the client's CheckRedirect was replaced")
	}
	got := mustRegistry(t, tool).Call(context.Background(), call(tools.HTTPFetch, `{"url":"`+srv.URL+`/redirect/1"}`))
	if want := tools.ErrorResult("GET %s/redirect/1: this client follows no redirects", srv.URL); !cmp.Equal(want, got) {
		t.Errorf("Call = %+v, want %+v", got, want)
	}
	got = mustRegistry(t, tool).Call(context.Background(), call(tools.HTTPFetch, `{"url":"`+srv.URL+`/text"}`))
	if want := tools.TextResult("Hello, world."); !cmp.Equal(want, got) {
		t.Errorf("Call = %+v, want %+v", got, want)
	}
}

func TestHTTPFetchConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		config    map[string]any
		wantAllow []string
		wantTime  time.Duration
		wantErr   string
	}{
		{
			name:     "no config",
			wantTime: DefaultHTTPFetchTimeout,
		},
		{
			name:      "both settings, hosts lower-cased and deduplicated",
			config:    map[string]any{"allow_hosts": []any{"Example.COM", "example.com", "[::1]", "api.github.com"}, "timeout": "10s"},
			wantAllow: []string{"::1", "api.github.com", "example.com"},
			wantTime:  10 * time.Second,
		},
		{
			name:      "hosts as []string",
			config:    map[string]any{"allow_hosts": []string{"example.com"}},
			wantAllow: []string{"example.com"},
			wantTime:  DefaultHTTPFetchTimeout,
		},
		{
			name:    "unknown key",
			config:  map[string]any{"proxy": "http://p", "timeout": "5s"},
			wantErr: "http_fetch: unknown config key proxy (known: allow_hosts, timeout)",
		},
		{
			name:    "unknown keys",
			config:  map[string]any{"retries": 2, "headers": map[string]any{"Accept": "text/html"}},
			wantErr: "http_fetch: unknown config keys headers, retries (known: allow_hosts, timeout)",
		},
		{
			name:    "timeout not a string",
			config:  map[string]any{"timeout": 10},
			wantErr: `http_fetch: timeout: want a duration such as "10s" or "1m" (got 10)`,
		},
		{
			name:    "timeout not a duration",
			config:  map[string]any{"timeout": "ten seconds"},
			wantErr: `http_fetch: timeout: "ten seconds" is not a duration; write one such as "10s" or "1m"`,
		},
		{
			name:    "timeout zero",
			config:  map[string]any{"timeout": "0s"},
			wantErr: `http_fetch: timeout must be positive (got "0s")`,
		},
		{
			name:    "timeout negative",
			config:  map[string]any{"timeout": "-1s"},
			wantErr: `http_fetch: timeout must be positive (got "-1s")`,
		},
		{
			name:    "allow_hosts not a list",
			config:  map[string]any{"allow_hosts": "example.com"},
			wantErr: "http_fetch: allow_hosts: want a list of host names such as [api.github.com] (got example.com)",
		},
		{
			name:    "allow_hosts empty",
			config:  map[string]any{"allow_hosts": []any{}},
			wantErr: "http_fetch: allow_hosts is empty: list the host names to allow, or leave allow_hosts out to allow any host",
		},
		{
			name:    "allow_hosts item not a string",
			config:  map[string]any{"allow_hosts": []any{"example.com", 3}},
			wantErr: `http_fetch: allow_hosts[1]: want a host name such as "api.github.com" (got 3)`,
		},
		{
			name:    "allow_hosts items not host names",
			config:  map[string]any{"allow_hosts": []any{"https://example.com/", "example.com:8080", "", "ok.example"}},
			wantErr: `http_fetch: allow_hosts[0]: "https://example.com/" is not a host name; write just the host, such as "api.github.com"; allow_hosts[1]: "example.com:8080" is not a host name; write just the host, such as "api.github.com"; allow_hosts[2]: "" is not a host name; write just the host, such as "api.github.com"`,
		},
		{
			name:    "every problem is reported",
			config:  map[string]any{"x": 1, "allow_hosts": []any{"a.com/b"}, "timeout": 5},
			wantErr: `http_fetch: unknown config key x (known: allow_hosts, timeout); allow_hosts[0]: "a.com/b" is not a host name; write just the host, such as "api.github.com"; timeout: want a duration such as "10s" or "1m" (got 5)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool, err := Factory(nil)(tt.config)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("factory = %v, %v\nwant error: %s", tool, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("factory: %v", err)
			}
			ft := tool.(*httpFetchTool)
			if diff := cmp.Diff(tt.wantAllow, ft.allow); diff != "" {
				t.Errorf("allowed hosts (-want +got):\n%s", diff)
			}
			if ft.timeout != tt.wantTime {
				t.Errorf("timeout = %s, want %s", ft.timeout, tt.wantTime)
			}
		})
	}
}

// TestHTTPFetchToolConfig checks the Go API's config checks, and that a
// recipe's config error names the tool.
func TestHTTPFetchToolConfig(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Config{AllowHosts: []string{"a.com/b"}, Timeout: -time.Second})
	want := `http_fetch: allow_hosts[0]: "a.com/b" is not a host name; write just the host, such as "api.github.com"; timeout must be positive (got -1s)`
	if err == nil || err.Error() != want {
		t.Errorf("New error = %v\nwant: %s", err, want)
	}
	_, err = tools.Catalog{tools.HTTPFetch: Factory(nil)}.Build([]tools.Ref{{Name: tools.HTTPFetch, Config: map[string]any{"timeout": "soon"}}})
	want = `tool "http_fetch": http_fetch: timeout: "soon" is not a duration; write one such as "10s" or "1m"`
	if err == nil || err.Error() != want {
		t.Errorf("Build error = %v\nwant: %s", err, want)
	}
}

func TestHTTPFetchDefinition(t *testing.T) {
	t.Parallel()
	tool, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	def := tool.Definition()
	if def.Name != tools.HTTPFetch {
		t.Errorf("Name = %q", def.Name)
	}
	for _, s := range []string{"GET", "http://", "https://", "HTML page comes back as its text", "binary", "2xx", "'max_chars'", "20000"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q: %s", s, def.Description)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {
			"url": {
				"type": "string",
				"description": "Absolute http:// or https:// URL to GET, such as \"https://example.com/page\"."
			},
			"max_chars": {
				"type": "integer",
				"minimum": 1,
				"maximum": 100000,
				"default": 20000,
				"description": "Most characters of the body to return; a longer body is cut. Default 20000."
			}
		},
		"required": ["url"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

// TestHTTPFetchRedacted checks that a password in a URL is not repeated
// in results, which the transcript keeps.
func TestHTTPFetchRedacted(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	u, err := url.Parse(srv.URL + "/missing")
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("marvin", "s3cret")
	got := fetchRegistry(t, srv, nil).Call(context.Background(), call(tools.HTTPFetch, `{"url":"`+u.String()+`"}`))
	if !got.IsError || strings.Contains(got.Text(), "s3cret") || !strings.Contains(got.Text(), "marvin:xxxxx@") {
		t.Errorf("Call = %q, want an error result with the password redacted", got.Text())
	}
}

// guidePage is an HTML page with most of what htmlText handles.
const guidePage = `<!DOCTYPE html>
<html><head><title>  The
  Guide </title>
<style>body { color: red }</style>
<script>var x = "<p>not text</p>";</script>
</head>
<body>
<nav><a href="/">Home</a> | <a href="about.html">About</a> | <a href="#top">Top</a> | <a href="mailto:a@example.com">Mail</a></nav>
<script>alert("hi")</script>
<h1>Getting   started</h1>
<p>Read the <a href="../intro?x=1">introduction</a> first,
   then the <a href="https://example.com/ref">reference</a>.</p>
<ul>
  <li>One</li>
  <li>Two
    <ol><li>Two &amp; a half</li><li><p>Deep</p></li></ol>
  </li>
  <li></li>
</ul>
<table>
  <tr><th>Name</th><th>Value</th></tr>
  <tr><td>a</td><td><b>1</b></td></tr>
</table>
<noscript>Enable JavaScript</noscript>
<template><p>hidden</p></template>
<svg><text>chart</text></svg>
<pre>line one
  line two</pre>


<p>first<br>second</p>
<div>   </div>
<p><a href="https://example.com/x">https://example.com/x</a></p>
<footer>&copy; 2026</footer>
</body></html>`

// TestHTTPFetchHTML checks that an HTML page comes back as its text, with
// links resolved against the URL after redirects.
func TestHTTPFetchHTML(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	page := func(path, contentType, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			if contentType == "" {
				w.Header()["Content-Type"] = nil // no header, and no sniffing by the server
			} else {
				w.Header().Set("Content-Type", contentType)
			}
			fmt.Fprint(w, body)
		})
	}
	page("/docs/guide", "text/html; charset=utf-8", guidePage)
	page("/xhtml", "application/xhtml+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head><body><p>Strict <a href="/y">y</a></p></body></html>`)
	page("/malformed", "text/html", `<title>Broken</title><p>Unclosed <b>bold <i>both</b> text<li>item</ul></div><p>after &amp c <a href="/z">z`)
	page("/base", "text/html", `<head><base href="https://example.org/root/"></head><p><a href="a">rel</a>`)
	page("/inline", "text/html", `<p><b>a</b><i>b</i>  c<span> d</span>e <a href="/l">link </a>next, <a href="/m">more</a>.</p>`)
	page("/no-text", "text/html", `<html><head><script>x()</script></head><body><!-- nothing --></body></html>`)
	page("/sniffed", "", `<html><body><p>Sniffed <a href="q">q</a></p></body></html>`)
	page("/plain-markup", "text/plain", `<p>not <a href="/a">HTML</a></p>`)
	page("/xml-markup", "application/xml", `<p>not <a href="/a">HTML</a></p>`)
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/docs/guide", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u := srv.URL
	guideText := "The Guide\n" +
		"\n" +
		"Home (" + u + "/) | About (" + u + "/docs/about.html) | Top | Mail\n" +
		"Getting started\n" +
		"Read the introduction (" + u + "/intro?x=1) first, then the reference (https://example.com/ref).\n" +
		"- One\n" +
		"- Two\n" +
		"  - Two & a half\n" +
		"  - Deep\n" +
		"Name | Value\n" +
		"a | 1\n" +
		"line one\n" +
		"  line two\n" +
		"first\n" +
		"second\n" +
		"https://example.com/x\n" +
		"© 2026"
	tests := []struct {
		name string
		args string
		want tools.Result
	}{
		{
			name: "page",
			args: `{"url":"` + u + `/docs/guide"}`,
			want: tools.TextResult(guideText),
		},
		{
			name: "links resolved against the URL after redirects",
			args: `{"url":"` + u + `/moved"}`,
			want: tools.TextResult(guideText),
		},
		{
			name: "truncation applies to the text",
			args: `{"url":"` + u + `/docs/guide","max_chars":12}`,
			want: tools.TextResult(guideText[:12] + fmt.Sprintf("\n\n[truncated: 12 of %d characters shown]", len([]rune(guideText)))),
		},
		{
			name: "xhtml",
			args: `{"url":"` + u + `/xhtml"}`,
			want: tools.TextResult("X\n\nStrict y (" + u + "/y)"),
		},
		{
			name: "malformed page",
			args: `{"url":"` + u + `/malformed"}`,
			want: tools.TextResult("Broken\n\nUnclosed bold both text\n- item\nafter & c z (" + u + "/z)"),
		},
		{
			name: "inline elements",
			args: `{"url":"` + u + `/inline"}`,
			want: tools.TextResult("ab c de link (" + u + "/l) next, more (" + u + "/m)."),
		},
		{
			name: "base element",
			args: `{"url":"` + u + `/base"}`,
			want: tools.TextResult("rel (https://example.org/root/a)"),
		},
		{
			name: "page with no text",
			args: `{"url":"` + u + `/no-text"}`,
			want: tools.TextResult("GET " + u + "/no-text: 200 OK, an HTML page with no text"),
		},
		{
			name: "sniffed as html",
			args: `{"url":"` + u + `/sniffed"}`,
			want: tools.TextResult("Sniffed q (" + u + "/q)"),
		},
		{
			name: "text/plain markup unchanged",
			args: `{"url":"` + u + `/plain-markup"}`,
			want: tools.TextResult(`<p>not <a href="/a">HTML</a></p>`),
		},
		{
			name: "xml markup unchanged",
			args: `{"url":"` + u + `/xml-markup"}`,
			want: tools.TextResult(`<p>not <a href="/a">HTML</a></p>`),
		},
	}
	r := fetchRegistry(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Call(context.Background(), call(tools.HTTPFetch, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

// Without allow_hosts, http_fetch reaches public addresses only: the
// address dialled is checked, whatever name led to it, and the server is
// never reached.
func TestHTTPFetchPublicOnly(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(srv.Close)
	tool, err := Factory(srv.Client())(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRegistry(t, tool)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "[64:ff9b::127.0.0.1]", "[::127.0.0.1]", "[2002:7f00:1::1]"} {
		u := "http://" + host + ":" + port + "/"
		got := r.Call(context.Background(), call(tools.HTTPFetch, `{"url":"`+u+`"}`))
		if !got.IsError || !strings.Contains(got.Text(), "allow_hosts") || strings.Contains(got.Text(), "secret") {
			t.Errorf("GET %s = %+v; want an error result naming allow_hosts", u, got)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the inner server was reached %d times", n)
	}
	if _, err := Factory(&http.Client{Transport: roundTripFunc(nil)})(nil); err == nil {
		t.Error("a transport the guard cannot wrap was accepted without allow_hosts")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
