package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = ""

// revision is set at build time where the build has no VCS information to
// read (deploy/Dockerfile leaves .git out of its context): -X
// main.revision=COMMIT.
var revision = ""

func versionString() string {
	return fmt.Sprintf("brain %s %s/%s %s", binaryVersion(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// binaryVersion is main.version, else the module's version when built with
// go install, else "(devel)".
func binaryVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// binaryRevision is the commit the binary was built from: main.revision,
// else the vcs.revision the go command stamps, else "unknown".
func binaryRevision() string {
	if revision != "" {
		return revision
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
