package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/google/go-cmp/cmp"
)

func TestResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  Result
		want Result
	}{
		{
			name: "text",
			got:  TextResult("42 rows"),
			want: Result{Content: []conversation.Block{{Type: conversation.BlockText, Text: "42 rows"}}},
		},
		{
			name: "error formats",
			got:  ErrorResult("no row %d; ids go up to %d", 7, 5),
			want: Result{Content: []conversation.Block{{
				Type: conversation.BlockText, Text: "no row 7; ids go up to 5",
				Annotations: &conversation.Annotations{Audience: []conversation.Role{conversation.RoleAssistant}},
			}}, IsError: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultText(t *testing.T) {
	t.Parallel()
	r := Result{Content: []conversation.Block{
		conversation.TextBlock("one"),
		conversation.TextBlock("two").For(conversation.RoleUser),
	}}
	if got, want := r.Text(), "one\ntwo"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestFunc(t *testing.T) {
	t.Parallel()
	def := Definition{Name: "echo", Description: "Echo.", Schema: json.RawMessage(`{"type":"object"}`)}
	f := Func{Def: def, Fn: func(_ context.Context, args json.RawMessage) (Result, error) {
		return TextResult(string(args)), nil
	}}
	if diff := cmp.Diff(def, f.Definition()); diff != "" {
		t.Errorf("Definition (-want +got):\n%s", diff)
	}
	res, err := f.Call(context.Background(), json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TextResult(`{"a":1}`), res); diff != "" {
		t.Errorf("Call (-want +got):\n%s", diff)
	}
}
