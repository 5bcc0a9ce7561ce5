package testutil

import "go.uber.org/goleak"

// IgnoreRedisRedial is the goleak option for go-redis's redial goroutine:
// a client whose server went down (the tests of a Redis outage) probes it
// every second, and the goroutine ends within a second of the client's
// Close — at times after goleak has looked. Packages whose tests shut a
// redis-server down pass it to goleak.VerifyTestMain.
var IgnoreRedisRedial = goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")
