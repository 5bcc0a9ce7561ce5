package redisdial

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// clusterScheme ends the scheme of a URL that names a Redis Cluster:
// redis+cluster://, or rediss+cluster:// with TLS.
const clusterScheme = "+cluster"

// clusterForm is how a redis+cluster:// URL is written, for errors.
const clusterForm = "redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...][?OPTION=VALUE...]"

// NotInClusterMode says whether err is a server's answer to a Cluster
// command when it is not in cluster mode (a redis+cluster:// URL that
// names one server).
func NotInClusterMode(err error) bool {
	return err != nil && strings.Contains(err.Error(), "cluster support disabled")
}

// IsClusterURL says whether spec names a Redis Cluster: its scheme is
// redis+cluster:// or another ending in +cluster (which ParseClusterURL
// refuses, saying why).
func IsClusterURL(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	return ok && strings.HasSuffix(scheme, clusterScheme)
}

// ParseClusterURL reads a redis+cluster:// or rediss+cluster:// URL, as
// brain serve and brain bench take it: user and password as in redis://,
// then the addresses of one or more of the cluster's nodes, separated by
// commas (the client learns the others from them), then go-redis's
// options of a cluster URL (redis.ParseClusterURL). It becomes the URL
// that go-redis reads, the first seed its address and the others addr
// parameters. Errors never repeat the URL, which may carry a password.
func ParseClusterURL(spec string) (*redis.ClusterOptions, error) {
	scheme, rest, ok := strings.Cut(spec, "://")
	if !ok || !strings.HasSuffix(scheme, clusterScheme) {
		return nil, fmt.Errorf("not a URL of a Redis Cluster: want %s", clusterForm)
	}
	base := strings.TrimSuffix(scheme, clusterScheme)
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("scheme %s:// is not one of a Redis Cluster's: want redis+cluster:// (or rediss+cluster:// for TLS), as in %s",
			scheme, clusterForm)
	}
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hosts := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	if hosts == "" {
		return nil, fmt.Errorf("%s:// names no node: list the addresses of one or more of the cluster's nodes, "+
			"separated by commas, as in %s", scheme, clusterForm)
	}
	seeds := strings.Split(hosts, ",")
	for n, seed := range seeds {
		if err := checkSeed(seed); err != nil {
			return nil, fmt.Errorf("%s:// node %d of %d (%q): %w; write each as HOST:PORT, separated by commas, as in %s",
				scheme, n+1, len(seeds), seed, err, clusterForm)
		}
	}
	path, query, _ := strings.Cut(tail, "?")
	if strings.Contains(query, "#") || strings.Contains(path, "#") {
		return nil, fmt.Errorf("%s:// URL has a fragment (#...): leave it out", scheme)
	}
	if path != "" && path != "/" && path != "/0" {
		return nil, fmt.Errorf("%s:// URL names database %q: a Redis Cluster has only database 0; leave the path out", scheme, strings.TrimPrefix(path, "/"))
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%s:// URL's options (after ?): %w", scheme, err)
	}
	for _, seed := range seeds[1:] {
		params.Add("addr", seed)
	}
	o, err := redis.ParseClusterURL(base + "://" + userinfo + seeds[0] + "?" + params.Encode())
	if err != nil {
		return nil, fmt.Errorf("%s:// URL: %w (the form is %s)", scheme, redactURLError(err), clusterForm)
	}
	return o, nil
}

// checkSeed says what is wrong with the address of a cluster's node in a
// redis+cluster:// URL, or nil.
func checkSeed(seed string) error {
	if seed == "" {
		return errors.New("is empty")
	}
	host, port, err := net.SplitHostPort(seed)
	if err != nil {
		return fmt.Errorf("is not HOST:PORT (%v)", err)
	}
	if host == "" {
		return errors.New("has no host")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// redactURLError is err without the URL that a *url.Error carries, which
// may hold a password.
func redactURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
