package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Link templates of present_results: a recipe declares them by name
// (presentation.links), the model names one and gives a value for each of
// its {placeholders}, and the server builds the URL. The model never writes
// a URL.

var (
	// linkNamePattern and placeholderPattern are the names recipes may use
	// (the recipe checker applies the same rules).
	linkNamePattern    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	placeholderPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	// hostLabelsPattern is what a value standing in a host name may hold.
	hostLabelsPattern = regexp.MustCompile(`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`)
)

// urlPart is the part of a URL a placeholder stands in; it decides how the
// placeholder's value is escaped.
type urlPart int

const (
	inPath     urlPart = iota // url.PathEscape: "/" and "?" cannot leave the segment
	inHost                    // letters, digits, "-" and "." only
	inQuery                   // url.QueryEscape
	inFragment                // url.QueryEscape
)

// linkPart is literal text of a template, or one placeholder.
type linkPart struct {
	literal string
	name    string // the placeholder's name; "" for literal text
	at      urlPart
}

// linkTemplate is one parsed link template.
type linkTemplate struct {
	name   string
	parts  []linkPart
	fields []string // placeholder names, sorted, each once
}

// parseLinkTemplate parses the template tmpl called name. Its errors are
// written for the recipe author.
func parseLinkTemplate(name, tmpl string) (*linkTemplate, error) {
	if !linkNamePattern.MatchString(name) {
		return nil, fmt.Errorf("links: %q: a link name must be lowercase letters, digits and `_`, starting with a letter", name)
	}
	at := inPath
	rest := tmpl
	switch {
	case strings.HasPrefix(tmpl, "https://"), strings.HasPrefix(tmpl, "http://"):
		at = inHost
		_, rest, _ = strings.Cut(tmpl, "://")
	case strings.HasPrefix(tmpl, "//"):
		return nil, fmt.Errorf("links.%s: %q starts with `//`, which leaves the site; write a path such as /app/... or a full https:// URL", name, tmpl)
	case !strings.HasPrefix(tmpl, "/"):
		return nil, fmt.Errorf("links.%s: a link template must start with `/`, `https://` or `http://` (got %q)", name, tmpl)
	}
	t := &linkTemplate{name: name}
	t.parts = append(t.parts, linkPart{literal: tmpl[:len(tmpl)-len(rest)]})
	for rest != "" {
		start, end := strings.IndexByte(rest, '{'), strings.IndexByte(rest, '}')
		switch {
		case start < 0 && end < 0:
			t.literal(rest, &at)
			rest = ""
			continue
		case start < 0 || (end >= 0 && end < start):
			return nil, fmt.Errorf("links.%s: `}` without `{` in %q; placeholders are written {name}", name, tmpl)
		case end < 0:
			return nil, fmt.Errorf("links.%s: `{` without `}` in %q; placeholders are written {name}", name, tmpl)
		}
		field := rest[start+1 : end]
		if !placeholderPattern.MatchString(field) {
			return nil, fmt.Errorf("links.%s: placeholder {%s} in %q must be a name of lowercase letters, digits and `_`, starting with a letter", name, field, tmpl)
		}
		t.literal(rest[:start], &at)
		t.parts = append(t.parts, linkPart{name: field, at: at})
		if !slices.Contains(t.fields, field) {
			t.fields = append(t.fields, field)
		}
		rest = rest[end+1:]
	}
	slices.Sort(t.fields)
	return t, nil
}

// literal appends literal text s and moves at past the URL parts s ends.
func (t *linkTemplate) literal(s string, at *urlPart) {
	if s == "" {
		return
	}
	t.parts = append(t.parts, linkPart{literal: s})
	for _, c := range s {
		switch {
		case c == '#':
			*at = inFragment
		case c == '?' && *at != inFragment:
			*at = inQuery
		case c == '/' && *at == inHost:
			*at = inPath
		}
	}
}

// placeholders returns "{a}, {b}", or "none".
func (t *linkTemplate) placeholders() string {
	if len(t.fields) == 0 {
		return "none"
	}
	return "{" + strings.Join(t.fields, "}, {") + "}"
}

// build returns the URL of t with values, each escaped for the part of the
// URL it stands in. Its errors are written for the model.
func (t *linkTemplate) build(values map[string]string) (string, error) {
	var missing, unknown []string
	for _, f := range t.fields {
		if values[f] == "" {
			missing = append(missing, "{"+f+"}")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if !slices.Contains(t.fields, k) {
			unknown = append(unknown, k)
		}
	}
	switch {
	case len(unknown) > 0:
		return "", fmt.Errorf("link template %q has no placeholder %s (its placeholders: %s)", t.name, strings.Join(unknown, ", "), t.placeholders())
	case len(missing) > 0:
		return "", fmt.Errorf("link template %q needs a value for %s", t.name, strings.Join(missing, ", "))
	}
	var sb strings.Builder
	for _, p := range t.parts {
		if p.name == "" {
			sb.WriteString(p.literal)
			continue
		}
		v := values[p.name]
		if n := utf8.RuneCountInString(v); n > MaxPresentText {
			return "", fmt.Errorf("the value of {%s} is %d characters long, want at most %d", p.name, n, MaxPresentText)
		}
		switch p.at {
		case inPath:
			if v == "." || v == ".." {
				return "", fmt.Errorf("the value of {%s} must not be %q: it would change the path", p.name, v)
			}
			sb.WriteString(url.PathEscape(v))
		case inHost:
			if !hostLabelsPattern.MatchString(v) {
				return "", fmt.Errorf("the value of {%s} stands in a host name and may hold only letters, digits, `-` and `.` (got %q)", p.name, v)
			}
			sb.WriteString(strings.ToLower(v))
		default:
			sb.WriteString(url.QueryEscape(v))
		}
	}
	href := sb.String()
	if _, err := url.Parse(href); err != nil {
		return "", fmt.Errorf("link template %q does not make a URL with these values: %w", t.name, err)
	}
	return href, nil
}

// linkSet is the link templates of one present_results tool, by name.
type linkSet map[string]*linkTemplate

// parseLinkSet parses the templates of config links; its error lists every
// bad one, in name order.
func parseLinkSet(links map[string]string) (linkSet, error) {
	set := make(linkSet, len(links))
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(links)) {
		t, err := parseLinkTemplate(name, links[name])
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		set[name] = t
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return set, nil
}

// names returns the template names, sorted.
func (s linkSet) names() []string { return slices.Sorted(maps.Keys(s)) }

// href builds the URL of link ref l. Its errors are written for the model.
func (s linkSet) href(l *linkArgs) (string, error) {
	name := strings.TrimSpace(l.Template)
	t, ok := s[name]
	switch {
	case name == "":
		return "", fmt.Errorf("no link template named; %s", s.known())
	case !ok:
		return "", fmt.Errorf("unknown link template %q; %s", name, s.known())
	}
	values := make(map[string]string, len(l.Values))
	for k, v := range l.Values {
		str, ok := scalarText(v)
		if !ok {
			return "", fmt.Errorf("the value of {%s} must be a string or a number", k)
		}
		values[k] = str
	}
	return t.build(values)
}

// known tells the model which templates it may use.
func (s linkSet) known() string {
	if len(s) == 0 {
		return "this recipe declares no link templates, so leave links out"
	}
	names := s.names()
	for i, n := range names {
		names[i] = n + " " + s[n].placeholders()
	}
	return "known: " + strings.Join(names, "; ")
}

// describe lists the templates for the tool description.
func (s linkSet) describe() string {
	if len(s) == 0 {
		return "No link templates are declared for you, so do not use links."
	}
	names := s.names()
	for i, n := range names {
		names[i] = n + " (" + s[n].placeholders() + ")"
	}
	return "Link templates you may name, with their placeholders: " + strings.Join(names, ", ") + "."
}

// scalarText returns a link value as text: a string as it is, a number as
// written, a boolean as true or false.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	}
	return "", false
}
