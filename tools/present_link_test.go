package tools

import (
	"encoding/json"
	"testing"
)

func TestLinkTemplateBuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tmpl   string
		values map[string]any
		want   string
		err    string
	}{
		{name: "query value", tmpl: "/app/media?filter={filter}", values: map[string]any{"filter": "type:jpeg"}, want: "/app/media?filter=type%3Ajpeg"},
		{name: "query value with & and =", tmpl: "/app/media?filter={filter}&page=1", values: map[string]any{"filter": "a&page=9 b"}, want: "/app/media?filter=a%26page%3D9+b&page=1"},
		{name: "JSON filter", tmpl: "/app/media?filter={filter}", values: map[string]any{"filter": `{"criteria":[{"fieldName":"mimeType","values":["image/png"]}]}`},
			want: "/app/media?filter=%7B%22criteria%22%3A%5B%7B%22fieldName%22%3A%22mimeType%22%2C%22values%22%3A%5B%22image%2Fpng%22%5D%7D%5D%7D"},
		{name: "path segment", tmpl: "/app/media/{id}", values: map[string]any{"id": "a/b?c#d e"}, want: "/app/media/a%2Fb%3Fc%23d%20e"},
		{name: "number value", tmpl: "/app/media/{id}", values: map[string]any{"id": json.Number("12")}, want: "/app/media/12"},
		{name: "boolean value", tmpl: "/app/media?all={all}", values: map[string]any{"all": true}, want: "/app/media?all=true"},
		{name: "fragment", tmpl: "/docs#{section}", values: map[string]any{"section": "a b#c"}, want: "/docs#a+b%23c"},
		{name: "placeholder twice", tmpl: "/x/{id}?again={id}", values: map[string]any{"id": "a b"}, want: "/x/a%20b?again=a+b"},
		{name: "full URL", tmpl: "https://duckduckgo.com/?q={query}", values: map[string]any{"query": "go 1.26"}, want: "https://duckduckgo.com/?q=go+1.26"},
		{name: "host label", tmpl: "https://{lang}.wikipedia.org/wiki/{page}", values: map[string]any{"lang": "EN", "page": "Go (language)"},
			want: "https://en.wikipedia.org/wiki/Go%20%28language%29"},
		{name: "host label refused", tmpl: "https://{lang}.wikipedia.org/", values: map[string]any{"lang": "evil.example/x?"},
			err: "the value of {lang} stands in a host name and may hold only letters, digits, `-` and `.` (got \"evil.example/x?\")"},
		{name: "dot segment", tmpl: "/app/{table}/list", values: map[string]any{"table": ".."}, err: `the value of {table} must not be "..": it would change the path`},
		{name: "missing value", tmpl: "/app/{a}/{b}", values: map[string]any{"a": "x"}, err: `link template "t" needs a value for {b}`},
		{name: "empty value", tmpl: "/app/{a}", values: map[string]any{"a": ""}, err: `link template "t" needs a value for {a}`},
		{name: "unknown value", tmpl: "/app/{a}", values: map[string]any{"a": "x", "z": "y"}, err: `link template "t" has no placeholder z (its placeholders: {a})`},
		{name: "no placeholders", tmpl: "/app/media", values: map[string]any{"a": "x"}, err: `link template "t" has no placeholder a (its placeholders: none)`},
		{name: "object value", tmpl: "/app/{a}", values: map[string]any{"a": map[string]any{}}, err: "the value of {a} must be a string or a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, err := parseLinkSet(map[string]string{"t": tt.tmpl})
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.href(&linkArgs{Template: "t", Values: tt.values})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("href = %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("href = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
