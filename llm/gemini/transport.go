package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/engine-brain/brain/llm/provider"
)

// recorder keeps what the SDK's error loses of one attempt: whether the
// request went out, the response's status, headers and error body, and why
// reading a 2xx stream failed.
type recorder struct {
	sent bool
	res  provider.Response
	// cut is the error that ended reading a 2xx body early (the connection
	// dropped); nil when the body ended cleanly or was not read to its end.
	cut error
}

// recorderKey carries an attempt's recorder in its request's context: the
// SDK passes the call's context to the request it builds, and the client
// is shared by concurrent calls.
type recorderKey struct{}

func withRecorder(ctx context.Context, rec *recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, rec)
}

// recording is the transport of the SDK's client: base, recording each
// response into the recorder of its request's context.
type recording struct{ base http.RoundTripper }

func (t recording) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	rec, _ := req.Context().Value(recorderKey{}).(*recorder)
	if rec == nil {
		return base.RoundTrip(req)
	}
	rec.sent = true
	res, err := rec.res.Middleware(req, base.RoundTrip)
	if err == nil && rec.res.Answered {
		res.Body = &watchedBody{ReadCloser: res.Body, rec: rec}
	}
	return res, err
}

// watchedBody records the first read error of a body other than its end.
type watchedBody struct {
	io.ReadCloser
	rec *recorder
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.rec.cut == nil {
		b.rec.cut = err
	}
	return n, err
}
