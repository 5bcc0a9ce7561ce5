package provider

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// BaseURL parses raw, an adapter's configured base_url, and reports when it
// is not an absolute http or https URL without query or fragment. Messages
// start with the provider's name, suggest example and never echo a password,
// query or fragment the URL may carry.
func BaseURL(provider, raw, example string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error repeats the URL, which may carry a password.
		return nil, fmt.Errorf("%s: base_url is not a valid URL; use e.g. %s", provider, example)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: base_url %q: must be an absolute http or https URL, e.g. %s", provider, shown(u), example)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s: base_url %q: must have no query or fragment", provider, shown(u))
	}
	return u, nil
}

// shown is u as an error may show it: no password, and no query or
// fragment, which may carry a key (Gemini accepts ?key=).
func shown(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	return c.Redacted()
}

// CheckKey reports an API key with white space or control characters in
// it, without echoing the key.
func CheckKey(provider, key string) error {
	if strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New(provider + ": api_key contains white space or control characters (a trailing newline from a file?)")
	}
	return nil
}
