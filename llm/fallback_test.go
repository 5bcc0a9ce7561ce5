package llm

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

// fixed answers every request with parts, then err; it records the model
// names it was asked for.
type fixed struct {
	parts []Part
	err   error
	asked *[]string
}

func (f fixed) Generate(_ context.Context, req *Request) iter.Seq2[Part, error] {
	*f.asked = append(*f.asked, req.Params.Model)
	return stream(f.parts, f.err)
}

func TestFallback(t *testing.T) {
	t.Parallel()
	down := errors.New("down")
	auth := errors.New("bad key")
	text := []Part{{Kind: PartText, Text: "hi"}, {Kind: PartFinish, Finish: FinishStop}}
	cases := []struct {
		name      string
		models    func(asked *[]string) []Candidate
		wantText  string
		wantErr   []error // each must match
		wantAsked []string
	}{
		{
			name: "the first that answers wins",
			models: func(a *[]string) []Candidate {
				return []Candidate{{fixed{err: down, asked: a}, "big"}, {fixed{err: auth, asked: a}, "other"}, {fixed{parts: text, asked: a}, "small"}, {fixed{parts: text, asked: a}, "never"}}
			},
			wantText: "hi", wantAsked: []string{"big", "other", "small"},
		},
		{
			name: "every failure is reported, each matchable",
			models: func(a *[]string) []Candidate {
				return []Candidate{{fixed{err: down, asked: a}, "big"}, {fixed{err: auth, asked: a}, ""}}
			},
			wantErr: []error{down, auth}, wantAsked: []string{"big", ""},
		},
		{
			name: "a cut answer is not continued by another model",
			models: func(a *[]string) []Candidate {
				return []Candidate{{fixed{parts: text[:1], err: down, asked: a}, "big"}, {fixed{parts: text, asked: a}, "small"}}
			},
			wantText: "hi", wantErr: []error{down}, wantAsked: []string{"big"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			got, err := Collect(Fallback(tc.models(&asked)...).Generate(context.Background(), &Request{Params: Params{Model: "big"}}))
			if got.Text != tc.wantText {
				t.Errorf("text %q, want %q", got.Text, tc.wantText)
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("error %v, want none", err)
			}
			for _, w := range tc.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not match %v", err, w)
				}
			}
			if len(asked) != len(tc.wantAsked) {
				t.Fatalf("asked %q, want %q", asked, tc.wantAsked)
			}
			for i := range asked {
				if asked[i] != tc.wantAsked[i] {
					t.Errorf("asked %q, want %q", asked, tc.wantAsked)
				}
			}
		})
	}
}

func TestFallbackStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var asked []string
	_, err := Collect(Fallback(Candidate{fixed{err: context.Canceled, asked: &asked}, "a"}, Candidate{fixed{asked: &asked}, "b"}).Generate(ctx, &Request{}))
	if !errors.Is(err, context.Canceled) || len(asked) != 1 {
		t.Errorf("err %v after asking %q; want the cancellation after one model", err, asked)
	}
}

// TestFallbackProgress checks that argument fragments are passed on, and
// that a candidate that failed after fragments alone, having delivered no
// part of an answer, is left for the next.
func TestFallbackProgress(t *testing.T) {
	t.Parallel()
	down := errors.New("down")
	fragment := func(id, args string) Part {
		return Part{Kind: PartToolArgs, ToolCall: &conversation.ToolCall{ID: id, Name: "respond", Arguments: json.RawMessage(args)}}
	}
	cut := []Part{fragment("a1", `{"message":"Hel`)}
	whole := []Part{
		fragment("b1", `{"message":`), fragment("b1", `"Hi"}`),
		{Kind: PartToolCall, ToolCall: &conversation.ToolCall{ID: "b1", Name: "respond", Arguments: json.RawMessage(`{"message":"Hi"}`)}},
		{Kind: PartFinish, Finish: FinishToolCalls},
	}
	var asked []string
	m := Fallback(Candidate{fixed{parts: cut, err: down, asked: &asked}, "big"}, Candidate{fixed{parts: whole, asked: &asked}, "small"})
	var got []Part
	for p, err := range m.Generate(context.Background(), &Request{}) {
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		got = append(got, p)
	}
	if diff := cmp.Diff(append(cut, whole...), got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"big", "small"}, asked); diff != "" {
		t.Errorf("models asked (-want +got):\n%s", diff)
	}
}
