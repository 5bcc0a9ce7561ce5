package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/api"
)

// tokenSetter is the part of api.Server a token reload needs.
type tokenSetter interface {
	SetTokens([]api.Token) error
	Open() bool
}

// tokenReloader reloads the API's tokens from the config file on SIGHUP,
// so that revoking a token takes no restart.
type tokenReloader struct {
	file      string // the config file read at start; "" when none was
	lookupEnv func(string) (string, bool)
	api       tokenSetter
	log       *zap.Logger
}

// Reload reads the config file again and hands its tokens to the API; the
// file's other settings take a restart. On error, a bad file's or a
// missing one's, the API keeps the tokens it has; the error is logged and
// returned.
func (r *tokenReloader) Reload(context.Context) error {
	if r.file == "" {
		r.log.Info("tokens reload: no config file was read at start (--config, BRAIN_CONFIG, ./brain.yaml): the tokens stay")
		return nil
	}
	var c serveConfig
	err := readConfigFile(r.file, &c, r.lookupEnv)
	if err == nil {
		err = r.api.SetTokens(c.Tokens)
	}
	if err != nil {
		r.log.Error("tokens reload failed: keeping the current tokens", zap.Error(err))
		return err
	}
	names := make([]string, len(c.Tokens))
	for i, t := range c.Tokens {
		names[i] = t.Name
	}
	r.log.Info("tokens reloaded", zap.String("file", r.file), zap.Strings("tokens", names))
	if len(c.Tokens) == 0 && !r.api.Open() {
		r.log.Warn("the config file has no tokens: the API refuses every request until tokens are added and reloaded (a reload never opens an API that has had tokens)",
			zap.String("file", r.file))
	}
	return nil
}
