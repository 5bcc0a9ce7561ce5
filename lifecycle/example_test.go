package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/engine-brain/brain/lifecycle"
)

func ExampleFire() {
	ctx := context.Background()
	now := time.Date(2025, 11, 29, 13, 15, 0, 0, time.UTC)

	// A status read back from the process record.
	st := lifecycle.Status{State: lifecycle.Running}

	tr, st, err := lifecycle.Fire(ctx, st, lifecycle.Pause, "operator:bob", now)
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Event, tr.From, "->", tr.To, "by", tr.By, "; stored:", st)

	tr, st, err = lifecycle.Fire(ctx, st, lifecycle.Resume, "operator:bob", now.Add(time.Minute))
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Event, tr.From, "->", tr.To, "by", tr.By, "; stored:", st)

	_, _, err = lifecycle.Fire(ctx, st, lifecycle.UserInput, "user:alice", now.Add(2*time.Minute))
	fmt.Println(err, errors.Is(err, lifecycle.ErrForbidden))

	// Output:
	// pause RUNNING -> PAUSED by operator:bob ; stored: PAUSED (from RUNNING)
	// resume PAUSED -> READY by operator:bob ; stored: READY
	// lifecycle: event "user_input" is not allowed in state READY true
}
