package httpfetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engine-brain/brain/tools"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// Limits of http_fetch.
const (
	// DefaultHTTPFetchTimeout bounds one fetch, body included, when the
	// recipe sets no timeout.
	DefaultHTTPFetchTimeout = 20 * time.Second
	// maxFetchBody is the most http_fetch reads of a body.
	maxFetchBody = 2 << 20
	// maxFetchRedirects is the most redirects one fetch follows.
	maxFetchRedirects = 5
	// defaultFetchChars and maxFetchChars are max_chars's default and
	// upper bound (the schema says the same).
	defaultFetchChars = 20000
	maxFetchChars     = 100000
	// maxFetchErrorChars is how much of a non-2xx body the error quotes.
	maxFetchErrorChars = 500
	// fetchUserAgent is the User-Agent of every request.
	fetchUserAgent = "brain-http-fetch/1"
)

// Description is the model-visible description of http_fetch.
const Description = "Fetch a URL with an HTTP GET and return the response body as text. " +
	"'url' must be an absolute http:// or https:// URL. Only text is returned: text/* (plain text, " +
	"HTML, CSV, ...), JSON and XML. An HTML page comes back as its text, not its markup: the title on " +
	"the first line, then one line per paragraph, heading, list item or table row, list items starting " +
	"with \"- \", each link's text followed by its absolute URL in parentheses, and scripts, styles " +
	"and images left out. Images, PDFs and other binary content are refused, and a status other than " +
	"2xx is an error. A result longer than 'max_chars' characters (default 20000) is cut, with a note " +
	"saying how much was shown."

const httpFetchSchema = `{
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
}`

// Config is the settings of http_fetch. The zero value fetches
// from any host at a public address with [DefaultHTTPFetchTimeout].
type Config struct {
	// AllowHosts, when not empty, are the only host names (without port)
	// http_fetch fetches from, redirects included; matching is exact and
	// case-insensitive ("example.com" does not allow "www.example.com").
	// Listed hosts may have any address, an inner one too. Empty, any host
	// is fetched whose address is public: loopback, private, link-local,
	// reserved, 6to4 and Teredo addresses are refused, and so are IPv6
	// addresses holding such an IPv4 one (checked on the address dialled,
	// so DNS cannot sneak one in), and no proxy is used.
	AllowHosts []string
	// Timeout bounds one fetch, body included; 0 means
	// [DefaultHTTPFetchTimeout]. The call's context can only shorten it.
	Timeout time.Duration
}

// httpFetchKeys are the config keys a recipe may give http_fetch.
var httpFetchKeys = []string{"allow_hosts", "timeout"}

// parseHTTPFetchConfig reads the settings a recipe gives http_fetch:
//
//	tools:
//	  - name: http_fetch
//	    config: {allow_hosts: [api.github.com], timeout: 10s}
//
// It reports every problem it finds, in one error.
func parseHTTPFetchConfig(config map[string]any) (Config, error) {
	var cfg Config
	var problems []string
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(config)) {
		if !slices.Contains(httpFetchKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		keys := "key"
		if len(unknown) > 1 {
			keys = "keys"
		}
		problems = append(problems, fmt.Sprintf("unknown config %s %s (known: %s)", keys, strings.Join(unknown, ", "), strings.Join(httpFetchKeys, ", ")))
	}
	if v, ok := config["allow_hosts"]; ok {
		hosts, msg := hostList(v)
		switch {
		case msg != "":
			problems = append(problems, msg)
		case len(hosts) == 0:
			problems = append(problems, "allow_hosts is empty: list the host names to allow, or leave allow_hosts out to allow any host")
		default:
			cfg.AllowHosts = hosts
			problems = append(problems, cfg.problems()...)
		}
	}
	if v, ok := config["timeout"]; ok {
		s, isString := v.(string)
		d, err := time.ParseDuration(strings.TrimSpace(s))
		switch {
		case !isString:
			problems = append(problems, fmt.Sprintf(`timeout: want a duration such as "10s" or "1m" (got %v)`, v))
		case err != nil:
			problems = append(problems, fmt.Sprintf(`timeout: %q is not a duration; write one such as "10s" or "1m"`, s))
		case d <= 0:
			problems = append(problems, fmt.Sprintf("timeout must be positive (got %q)", s))
		default:
			cfg.Timeout = d
		}
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("%s: %s", tools.HTTPFetch, strings.Join(problems, "; "))
	}
	return cfg, nil
}

// hostList returns allow_hosts as a list of strings (a YAML or JSON list
// decodes as []any; a Go caller may pass []string), or why it is not one.
func hostList(v any) ([]string, string) {
	switch v := v.(type) {
	case []string:
		return v, ""
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Sprintf("allow_hosts[%d]: want a host name such as \"api.github.com\" (got %v)", i, e)
			}
			out[i] = s
		}
		return out, ""
	}
	return nil, fmt.Sprintf("allow_hosts: want a list of host names such as [api.github.com] (got %v)", v)
}

// validate checks cfg; its message is written for the recipe author.
func (cfg Config) validate() error {
	if ps := cfg.problems(); len(ps) > 0 {
		return fmt.Errorf("%s: %s", tools.HTTPFetch, strings.Join(ps, "; "))
	}
	return nil
}

// problems returns what is wrong with cfg, if anything.
func (cfg Config) problems() []string {
	var ps []string
	for i, h := range cfg.AllowHosts {
		if _, err := hostName(h); err != nil {
			ps = append(ps, fmt.Sprintf("allow_hosts[%d]: %v", i, err))
		}
	}
	if cfg.Timeout < 0 {
		ps = append(ps, fmt.Sprintf("timeout must be positive (got %s)", cfg.Timeout))
	}
	return ps
}

// hostName returns the host name h names, lower-cased, or why h is not one
// (a URL, a host with a port, a blank).
func hostName(h string) (string, error) {
	u, err := url.Parse("//" + h)
	if err != nil || h == "" || u.Host != h || u.Port() != "" || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not a host name; write just the host, such as \"api.github.com\"", h)
	}
	return strings.ToLower(u.Hostname()), nil
}

// New returns the http_fetch tool, which fetches with a copy of
// client (nil: a client with Go's default transport) whose CheckRedirect
// first applies http_fetch's rules (at most 5 redirects, each to an http or
// https URL of an allowed host) and then client's own, if any. It fails on
// a config that [Config] does not allow.
func New(client *http.Client, cfg Config) (tools.Tool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &httpFetchTool{timeout: cfg.Timeout}
	if t.timeout == 0 {
		t.timeout = DefaultHTTPFetchTimeout
	}
	for _, h := range cfg.AllowHosts {
		name, _ := hostName(h) // validated
		t.allow = append(t.allow, name)
	}
	slices.Sort(t.allow)
	t.allow = slices.Compact(t.allow)
	if client == nil {
		client = &http.Client{}
	}
	if len(t.allow) == 0 {
		guarded, err := publicOnly(client)
		if err != nil {
			return nil, err
		}
		client = guarded
	}
	c := *client // the caller's client is not ours to change
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxFetchRedirects {
			return &redirectError{fmt.Sprintf("stopped after %d redirects (the next to %s); fetch the final URL directly", maxFetchRedirects, req.URL.Redacted())}
		}
		if err := t.check(req.URL); err != nil {
			return &redirectError{fmt.Sprintf("redirected to %s, which http_fetch refuses: %v", req.URL.Redacted(), err)}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	t.client = &c
	return t, nil
}

// Factory returns the catalog entry of http_fetch, which fetches
// with client (nil: a default client; see [New]). Its optional
// settings are allow_hosts, a list of host names, and timeout, a Go
// duration such as "10s"; other keys are an error.
func Factory(client *http.Client) tools.Factory {
	return func(config map[string]any) (tools.Tool, error) {
		cfg, err := parseHTTPFetchConfig(config)
		if err != nil {
			return nil, err
		}
		return New(client, cfg)
	}
}

// redirectError is why CheckRedirect refused a redirect, for the model.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

type httpFetchTool struct {
	client  *http.Client
	timeout time.Duration
	allow   []string // sorted host names; empty: any host
}

var _ tools.Tool = (*httpFetchTool)(nil)

func (*httpFetchTool) Definition() tools.Definition {
	return tools.Definition{Name: tools.HTTPFetch, Description: Description, Schema: tools.Compact(httpFetchSchema)}
}

// fetchArgs are the arguments of an http_fetch call. MaxChars is an
// integer the schema checked, decoded as float64 so that 20000.0 is one.
type fetchArgs struct {
	URL      string   `json:"url"`
	MaxChars *float64 `json:"max_chars"`
}

// check returns why http_fetch must not fetch u, or nil.
func (t *httpFetchTool) check(u *url.URL) error {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%s is not an http or https URL; write an absolute URL such as \"https://example.com/page\"", u.Redacted())
	}
	if host := strings.ToLower(u.Hostname()); len(t.allow) > 0 && !slices.Contains(t.allow, host) {
		return fmt.Errorf("host %s is not allowed; http_fetch may fetch only from %s", host, strings.Join(t.allow, ", "))
	}
	return nil
}

func (t *httpFetchTool) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	var a fetchArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{}, invalidArguments(`invalid arguments for http_fetch (%v); send {"url": "https://..."}`, err)
	}
	maxChars := defaultFetchChars
	if a.MaxChars != nil {
		maxChars = min(max(int(*a.MaxChars), 1), maxFetchChars)
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil {
		return tools.Result{}, invalidArguments(`http_fetch "url": %q is not a URL; write an absolute URL such as "https://example.com/page"`, a.URL)
	}
	if err := t.check(u); err != nil {
		return tools.Result{}, invalidArguments(`http_fetch "url": %v`, err)
	}
	return t.fetch(ctx, u, maxChars)
}

// fetch GETs u and returns its body as text (an HTML page's text, not
// its markup), cut to maxChars characters.
func (t *httpFetchTool) fetch(ctx context.Context, u *url.URL, maxChars int) (tools.Result, error) {
	shown := u.Redacted()
	tctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.Result{}, invalidArguments(`http_fetch "url": %s: %v`, shown, err)
	}
	req.Header.Set("User-Agent", fetchUserAgent)
	resp, err := t.client.Do(req)
	if err != nil {
		return tools.Result{}, t.failed(ctx, tctx, shown, err)
	}
	defer resp.Body.Close()

	ct := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("GET %s: %s", shown, resp.Status)
		if ct == "" || isText(ct) {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxFetchErrorChars*utf8.UTFMax))
			if s, n := tools.Cut(strings.TrimSpace(text(b)), maxFetchErrorChars); s != "" {
				msg += "\n" + s
				if n > maxFetchErrorChars {
					msg += "…"
				}
			}
		}
		return tools.ErrorResult("%s", msg), nil
	}
	if ct != "" && !isText(ct) {
		return notText(shown, ct), nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody+1))
	if err != nil {
		return tools.Result{}, t.failed(ctx, tctx, shown, err)
	}
	if ct == "" {
		if ct = mediaType(http.DetectContentType(b)); !isText(ct) {
			return notText(shown, ct), nil
		}
	}
	over := len(b) > maxFetchBody
	if over {
		b = b[:maxFetchBody]
		b = b[:lastRuneStart(b)]
	}
	body := decode(b, resp.Header.Get("Content-Type"), isHTML(ct))
	if body == "" {
		return tools.TextResult(fmt.Sprintf("GET %s: %s, with an empty body", shown, resp.Status)), nil
	}
	if isHTML(ct) {
		// Links are resolved against the URL after redirects.
		if body = htmlText(body, resp.Request.URL); body == "" {
			return tools.TextResult(fmt.Sprintf("GET %s: %s, an HTML page with no text", shown, resp.Status)), nil
		}
	}
	s, total := tools.Cut(body, maxChars)
	switch {
	case over:
		s += fmt.Sprintf("\n\n[truncated: %d of more than %d characters shown]", utf8.RuneCountInString(s), total)
	case total > maxChars:
		s += fmt.Sprintf("\n\n[truncated: %d of %d characters shown]", maxChars, total)
	}
	return tools.TextResult(s), nil
}

// failed returns the error of a fetch that got no complete response: the
// caller's context ending (its error, wrapped), http_fetch's own timeout
// (matching context.DeadlineExceeded), a refused redirect or a transport
// failure.
func (t *httpFetchTool) failed(ctx, tctx context.Context, shown string, err error) error {
	var re *redirectError
	var blocked *blockedAddressError
	var ue *url.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("GET %s: %w", shown, ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return timeoutError(fmt.Sprintf("GET %s: no complete response within %s; try again later or a smaller resource", shown, t.timeout))
	case errors.As(err, &re):
		return fmt.Errorf("GET %s: %w", shown, re)
	case errors.As(err, &blocked):
		return invalidArguments("GET %s: %v", shown, blocked)
	case errors.As(err, &ue):
		return fmt.Errorf("GET %s: %w", shown, ue.Err)
	}
	return fmt.Errorf("GET %s: %w", shown, err)
}

// notText is the error result of a body that is not text.
func notText(shown, ct string) tools.Result {
	return tools.ErrorResult("GET %s: content type %s is not text; http_fetch returns only text (text/*, JSON, XML)", shown, ct)
}

// mediaType returns the lower-case media type of a Content-Type header
// ("text/html" of "text/html; charset=utf-8"), or "" when there is none.
func mediaType(header string) string {
	if mt, _, err := mime.ParseMediaType(header); err == nil || mt != "" {
		return mt
	}
	mt, _, _ := strings.Cut(header, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// isText reports whether media type mt is text http_fetch returns.
func isText(mt string) bool {
	return strings.HasPrefix(mt, "text/") ||
		mt == "application/json" || mt == "application/xml" ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// decode returns body b as UTF-8 text. Its encoding is the one the
// response declares (a byte-order mark, the Content-Type's charset, an
// HTML page's meta tag); an HTML page that declares none is read as UTF-8
// when it is valid UTF-8, else as windows-1252, as browsers do; other text
// that declares none is read as UTF-8. Bytes that do not decode become
// U+FFFD.
func decode(b []byte, contentType string, html bool) string {
	var enc encoding.Encoding
	if html {
		enc, _, _ = charset.DetermineEncoding(b, contentType)
	} else if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		enc, _ = charset.Lookup(params["charset"])
	}
	if enc == nil || enc == encoding.Nop || enc == unicode.UTF8 {
		return text(b)
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return text(b)
	}
	return text(out)
}

// text returns b as valid UTF-8, invalid bytes replaced.
func text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// lastRuneStart returns len(b) less the bytes of a rune the end of b cuts
// in two.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// invalidArguments is an error matching tools.ErrInvalidArguments whose
// message is the formatted text.
func invalidArguments(format string, a ...any) error {
	return tools.InvalidArguments(fmt.Sprintf(format, a...))
}

// timeoutError is a fetch that ran out of its time: its message says so,
// and it matches context.DeadlineExceeded.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (e timeoutError) Unwrap() error { return context.DeadlineExceeded }
