package web

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"runtime/debug"

	"github.com/yuin/goldmark"
	"go.uber.org/zap"
)

//go:embed static
var static embed.FS

// DefaultMaxMarkdown bounds the body of POST /console/api/markdown.
const DefaultMaxMarkdown = 256 << 10

// ContentSecurityPolicy is the policy of every answer: the page loads
// scripts, styles, images and data from this server only, and runs no
// inline script or style.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentTypes are the types of the embedded assets, by extension; an
// asset of another extension is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Config configures a Handler. Zero values take the defaults named below.
type Config struct {
	// Logger receives the handler's logs (default: none).
	Logger *zap.Logger
	// MaxMarkdown bounds a markdown request's body in bytes (default
	// DefaultMaxMarkdown).
	MaxMarkdown int64
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.MaxMarkdown == 0 {
		c.MaxMarkdown = DefaultMaxMarkdown
	}
}

func (c *Config) validate() error {
	if c.MaxMarkdown < 1 {
		return fmt.Errorf("web: invalid config: MaxMarkdown: must be positive (got %d)", c.MaxMarkdown)
	}
	return nil
}

// Handler serves the console: the page at /, its assets under /console/
// and the markdown renderer at POST /console/api/markdown. It is immutable
// once built and safe for concurrent use.
type Handler struct {
	cfg    Config
	log    *zap.Logger
	mux    *http.ServeMux
	assets fs.FS
	md     goldmark.Markdown
}

// New builds a handler.
func New(cfg Config) (*Handler, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	assets, err := fs.Sub(static, "static")
	if err != nil {
		return nil, fmt.Errorf("web: embedded assets: %w", err)
	}
	h := &Handler{cfg: cfg, log: cfg.Logger.Named("web"), mux: http.NewServeMux(), assets: assets, md: newMarkdown()}
	h.mux.HandleFunc("GET /{$}", h.serveAsset("index.html"))
	h.mux.HandleFunc("GET /console/{file}", func(w http.ResponseWriter, r *http.Request) {
		h.serveAsset(r.PathValue("file"))(w, r)
	})
	h.mux.HandleFunc("POST /console/api/markdown", h.markdown)
	return h, nil
}

// ServeHTTP sets the security headers of every answer and routes the
// request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer h.recoverPanic(w, r)
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// serveAsset serves the embedded file name. The assets are small and
// change with the binary, so they are revalidated on every load.
func (h *Handler) serveAsset(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctype, ok := contentTypes[path.Ext(name)]
		if !ok || name == "index.html" && r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(h.assets, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	}
}

// MarkdownRequest is the body of POST /console/api/markdown.
type MarkdownRequest struct {
	Markdown string `json:"markdown"`
}

// MarkdownResponse answers it: HTML safe to insert in the page.
type MarkdownResponse struct {
	HTML string `json:"html"`
}

// markdown renders a markdown text. It needs no token: it reads nothing
// but the request and changes nothing.
func (h *Handler) markdown(w http.ResponseWriter, r *http.Request) {
	var req MarkdownRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxMarkdown))
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("markdown: the body is over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, `markdown: want a JSON body {"markdown": "..."}: `+err.Error(), http.StatusBadRequest)
		return
	}
	out, err := render(h.md, []byte(req.Markdown))
	if err != nil {
		h.log.Error("markdown rendering failed", zap.Error(err))
		http.Error(w, "markdown: rendering failed", http.StatusInternalServerError)
		return
	}
	b, err := json.Marshal(MarkdownResponse{HTML: string(out)})
	if err != nil {
		http.Error(w, "markdown: encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// recoverPanic turns a handler's panic into a 500 with the stack logged.
func (h *Handler) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	h.log.Error("panic in a handler", zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
	http.Error(w, "internal error", http.StatusInternalServerError)
}
