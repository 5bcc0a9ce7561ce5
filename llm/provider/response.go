package provider

import (
	"bytes"
	"io"
	"net/http"
)

// MaxErrorBody bounds how much of an error response Response keeps.
const MaxErrorBody = 64 << 10

// Response records what an SDK's error loses of the response to one
// attempt: the status, headers and start of an error body (a proxy's page,
// a compatible server's own JSON), and whether a 2xx answer arrived. Its
// Middleware fits the SDKs' option.WithMiddleware; use one Response per
// attempt.
type Response struct {
	// Failed is the error response (status 400 or above), or nil.
	Failed *http.Response
	// Body is the start of Failed's body, at most MaxErrorBody bytes. The
	// SDK reads the same bytes again.
	Body []byte
	// Answered reports that a 2xx response arrived.
	Answered bool
}

// Middleware sends req through next and records the response.
func (r *Response) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	r.Answered = err == nil && res.StatusCode < 400
	if err == nil && res.StatusCode >= 400 {
		r.Failed = res
		r.Body, _ = io.ReadAll(io.LimitReader(res.Body, MaxErrorBody))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(r.Body))
	}
	return res, err
}
