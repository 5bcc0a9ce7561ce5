package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type logOptions struct {
	level  string
	format string
}

// newLogger builds the one logger the binary passes down to every component.
func newLogger(o logOptions, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(o.level)
	if err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", o.level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch o.format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, fmt.Errorf("--log-format %q: want json or console", o.format)
	}
	core := zapcore.NewCore(enc, zapcore.AddSync(w), level)
	return zap.New(core, zap.ErrorOutput(zapcore.AddSync(w))), nil
}
