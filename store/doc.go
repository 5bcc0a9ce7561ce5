// Package store is the Redis persistence of brain's processes: their
// records, inboxes and conversation logs, the wake queue, the leases and
// fencing tokens under which turns run, the atomic turn commit, and
// durable timers (docs/ARCHITECTURE.md: the walk of one message, the
// races; the keys are below).
//
// # Keys
//
// Every process belongs to one of the deployment's partitions (Config.
// Partitions, 64 by default, recorded in Redis under brain:layout and
// checked by CheckLayout): crc32 of its id, modulo their number. Every key
// a process's scripts touch starts with its partition's base, brain:{T}:,
// whose hash tag T puts it in one Redis Cluster slot (keys.go says how T
// is chosen); below, B is that base.
//
//	B proc:<pid>      hash    recipe, engine, state, paused_from, version, parent,
//	                            depth, owner, created_at, updated_at (unix ms),
//	                            queued ("1"; "0" or absent when not), fence
//	                            (token counter), metadata (JSON), turn,
//	                            turn_at, wake, tokens_in, tokens_out (what its
//	                            model calls used; absent before any),
//	                            tokens_day ("<days since 1970>:<tokens>": those
//	                            of the last UTC day with some), trimmed
//	                            (events commits removed from the log; absent
//	                            before any), steering (what a user's message
//	                            does while a turn runs: steer, interrupt or
//	                            reject; absent for queue, the default)
//	B inbox:<pid>     stream  pending messages: kind, from, content, at (unix ms),
//	                            and traceparent when posted with one
//	B events:<pid>    stream  the log: e = JSON of a conversation.Event; the
//	                            entry id is the event's ID; it only grows
//	                            while a claim holds the lease (a claim knows
//	                            nobody wrote after it by its length): only a
//	                            commit trims it, to Claim.KeepEvents
//	B lease:<pid>     string  "<node>|<token>", PX = the lease TTL
//	B idem:<pid>      hash    idempotency key -> inbox message id (24h);
//	                            also "fired:<timer>" (a one-shot timer fired,
//	                            PutTimerOnce) and "tick:<timer>" (the message
//	                            id of the timer's last tick, FireTimer)
//	B timers:<pid>    hash    timer id -> JSON spec
//	B workers:<pid>   zset    worker pid -> created_at ms: the workers it
//	                            started, deleted with it (Delete); a worker is
//	                            created in its parent's partition (WorkerID)
//	B approvals:<pid> hash    call id -> who may decide it, "1" once decided
//	B live:<pid>      channel Pub/Sub, not a key: the live updates of its
//	                            running turns, JSON each (live.go)
//	B wake:<engine>   stream  the partition's wake queue of the engine,
//	                            consumer group "nodes", field pid; a settled
//	                            wake is acknowledged, and deleted later with
//	                            the others every node is done with (TrimWakes)
//	B state:<STATE>   zset    pid -> created_at ms: the index List walks
//	B owner:<owner>   zset    pid -> created_at ms: the index ListOwned walks
//	B waiting         set     the processes whose calls wait for approval
//	B due             zset    "<pid>|<timer id>" -> due unix ms
//	brain:bell:{tag}:<engine>
//	                    string  touched whenever a wake is queued on the
//	                            stream brain:{tag}:wake:<engine> (the bell
//	                            watches their one prefix, bell.go)
//	brain:layout        string  "partitions=<n>" (CheckLayout)
//	brain:libraries     zset    Lua library name -> when a node last said it
//	                            uses it, unix ms (TendLibraries)
//	brain:nodes:<engine> zset   node -> until when it reads the engine's
//	                            wakes, unix ms (Beat): the members among
//	                            which each wake stream has a home
//	                            (HomeStreams)
//	brain:lease:<name>  string  the node that holds the lease of a duty one
//	                            node does for all, PX = its TTL (HoldLease)
//
// Reads across partitions (List, Counts, Approvals, DueTimers) ask every
// partition in one round trip and merge.
//
// turn and turn_at name the process's current (or last) turn and the
// stream id of its turn_start, so that a recovering claim resumes it
// without scanning the log; wake names the wake entry of the claim that
// holds the lease ("<stream> <entry id>").
//
// # Atomic steps
//
// Every change is one Lua script (lua/*.lua, embedded); every call is one
// round trip, except Transition (a read, then a compare-and-set on the
// record's version) and the first wake read of an engine (which creates
// its consumer groups). Script calls that goroutines make at the same time
// share one: they go out as one pipeline (batch.go), so a node's
// concurrent turns cost the server one read and one write between them.
// The scripts share one prelude, put together from lua/prelude.lua (the key
// layout, the record, the events scripts write), lua/lifecycle.lua (the part
// of the lifecycle table they fire) and lua/inbox.lua (the wake queue, the
// wake rule and the post semantics), so each exists once. On Redis 7 they
// are the functions of one library, brain_<hash of the code> (FCALL),
// loaded on first use and again when the server lost it; each version of
// brain loads its own, and nodes delete those of versions no node has
// used for a day (TendLibraries). A server
// without functions (older, miniredis) or whose ACL denies them runs the
// same scripts with EVALSHA. The events scripts write themselves are
// templates Go encodes once and bakes into the prelude (TPL), with
// placeholders for what changes between calls (the time, the turn, who
// sent the message that unblocks a process); the prelude fills them in.
//
// # The wake rule
//
// After every change to a process or its inbox the wake rule of package
// inbox runs (its doc.go has it as a table, per state and message kind): a
// READY process with anything in its inbox is put on the wake queue; a
// BLOCKED process with a user or operator message in its inbox fires
// user_input (by the sender of the first such message), becomes READY and
// is put on the queue. PAUSED, RUNNING, DONE and FAILED processes never
// are. A process is on the queue at most once: the queued mark is set with
// the entry and cleared by the claim that takes it. lua/inbox.lua is the
// rule's Redis side; TestLuaWakeRule checks it against inbox.OnPost, and
// the store passes the conformance suite of package inboxtest
// (TestInboxConformance).
//
// # Turns
//
// A node reads wakes (ReadWakes, ClaimStaleWakes), takes one with Claim
// (lease, fencing token, wake event, drain), makes progress durable with
// Checkpoint, keeps its lease with RenewLease and ends the turn with Commit.
// Every write of a turn is fenced: a claim whose lease expired, or whose
// token a newer claim replaced, gets ErrFenced and writes nothing. A node
// that dies leaves its wake pending; another node takes it with
// ClaimStaleWakes and Claim recovers the turn.
//
// # Deleting
//
// Delete removes a process's keys and index entries in one script, refused
// while a turn holds the lease; DeleteFinished does it for the DONE and
// FAILED processes unchanged since a cutoff. Nothing else deletes a
// process: the log of one that is kept only grows, unless its turns'
// commits trim it (Claim.KeepEvents).
//
// # Replicas
//
// With Config.WaitReplicas, every pipeline of scripts ends with WAIT, and a
// write the replicas did not take in time fails with ErrNotReplicated.
//
// # Redis Cluster
//
// Each script touches the keys of one partition, in one slot: a worker is
// created in its parent's partition (a generated id is drawn there, a
// keyed one comes from WorkerID, and Create refuses one named elsewhere:
// ErrWorkerPartition), so its creation, its result and its deletion reach
// the parent's keys in the worker's own script, and nothing passes between
// partitions. On a Cluster the reads over many wake streams go per slot:
// no command blocks on streams of several slots, so ReadWakes reads the
// streams without blocking, a window at a time, in one pipeline (one
// round trip per master), and waits between reads for the store's bell
// (bell.go): Redis's client-side caching, in broadcast mode, tells a
// subscriber on each master which wake streams changed, and the streams
// that rang are read at once. A ring is a hint: every stream is still read
// bellPoll apart, so a lost ring (a failover, a slot moved) costs that
// much latency, never a wake, and without a bell the reads back off from
// pollFirst to pollMost. StealWakes runs its script per partition, the
// function library is loaded on every master, and WaitReplicas asks each
// master that took a write for its own replicas.
//
// # What it must not know
//
// store knows Redis, conversation events, the lifecycle table and the wake
// rule of package inbox; it runs no engine, calls no model and decides no
// transition by itself except those of the wake rule (user_input), Claim
// (wake, recover) and the ones its callers ask for.
package store
