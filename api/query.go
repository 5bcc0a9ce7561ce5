package api

import (
	"net/http"
	"net/url"
	"strings"
)

// checkQuery refuses a query string that does not decode whole. Go's
// r.URL.Query() drops a pair it cannot decode without a word, so
// ?after=%zz would read as no cursor at all and serve the first page.
func checkQuery(raw string) error {
	for pair := range strings.SplitSeq(raw, "&") {
		if strings.Contains(pair, ";") {
			return errorf(http.StatusBadRequest, CodeInvalidParameter,
				"the query: %q holds a ';', which does not separate parameters; separate them with '&', and write a ';' inside a value as %%3B", pair)
		}
		name, value, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(name)
		if err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidParameter,
				"the query: the parameter name %q does not decode (%v); percent-encode it, writing a literal %% as %%25", name, err)
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidParameter,
				"parameter %q: the value %q does not decode (%v); percent-encode it, writing a literal %% as %%25", key, value, err)
		}
	}
	return nil
}
