package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
)

// Every adapter's requests carry the W3C traceparent of the call's span,
// whatever the global propagator.
func TestProvidersSendTraceParent(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	for _, typ := range []string{TypeOpenAI, TypeAnthropic, TypeGemini} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Get("traceparent")
				http.Error(w, `{"error": {"message": "no"}}`, http.StatusBadRequest) // not retried
			}))
			t.Cleanup(srv.Close)
			set, err := New([]Config{{Name: typ, Type: typ, BaseURL: srv.URL, APIKey: "k", Model: "m"}}, Options{Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			m, err := set.Resolve(recipes.Model{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := trace.ContextWithSpanContext(context.Background(), sc)
			_, _ = llm.Collect(m.Generate(ctx, &llm.Request{
				Messages: []conversation.Message{{Role: conversation.MessageUser, Content: []conversation.Block{conversation.TextBlock("hi")}}},
			}))
			select {
			case tp := <-got:
				if want := "00-" + sc.TraceID().String() + "-"; !strings.HasPrefix(tp, want) {
					t.Errorf("traceparent %q, want one of trace %s", tp, sc.TraceID())
				}
			default:
				t.Fatal("the provider got no request")
			}
		})
	}
}
