package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// logOptions are the logger's settings. Every command takes them from
// --log-format and --log-level before the command, over BRAIN_LOG_FORMAT
// and BRAIN_LOG_LEVEL; brain serve also from its own flags and, under
// them, the config file's log section (the logSettings of config.go).
type logOptions struct {
	Format string // json or console
	Level  string // debug, info, warn or error
}

func defaultLogOptions() logOptions { return logOptions{Format: "console", Level: "info"} }

func (o *logOptions) setFormat(v string) error {
	if v != "json" && v != "console" {
		return fmt.Errorf("want json or console (got %q)", v)
	}
	o.Format = v
	return nil
}

func (o *logOptions) setLevel(v string) error {
	switch v {
	case "debug", "info", "warn", "error":
		o.Level = v
		return nil
	}
	return fmt.Errorf("want debug, info, warn or error (got %q)", v)
}

// commandLog returns the log settings of a command other than serve: the
// flags given before the command (checked when parsed) over the
// environment over the defaults.
func commandLog(flagged []flagValue, lookupEnv func(string) (string, bool)) (logOptions, error) {
	c := serveConfig{Log: defaultLogOptions()}
	for _, s := range logSettings {
		if v, ok := lookupEnv(s.env()); ok && v != "" {
			if err := s.set(&c, v); err != nil {
				return logOptions{}, fmt.Errorf("%s=%q: %w", s.env(), v, err)
			}
		}
	}
	for _, f := range flagged {
		_ = f.s.set(&c, f.v)
	}
	return c.Log, nil
}

// newLogger builds the one logger the binary passes down to every
// component, from checked options.
func newLogger(o logOptions, w io.Writer) *zap.Logger {
	level, _ := zapcore.ParseLevel(o.Level) // one of the four setLevel takes
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if o.Format == "json" {
		enc = zapcore.NewJSONEncoder(encCfg)
	} else {
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	}
	core := zapcore.NewCore(enc, zapcore.AddSync(w), level)
	return zap.New(core, zap.ErrorOutput(zapcore.AddSync(w)))
}
