package redisserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisinfo"
)

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = 16384

// ClusterNodeTimeout is the cluster-node-timeout of a cluster's nodes: a
// master that does not answer for this long is failed over to one of its
// replicas (a second or two later, as Redis Cluster elects one). Short, so
// that a test of a failover is quick; long enough that a loaded machine
// does not fail a master that is up.
const ClusterNodeTimeout = time.Second

// clusterFormTimeout bounds how long a cluster may take to form; it only
// guards against a cluster that never does.
const clusterFormTimeout = 30 * time.Second

// clusterPoll is how often the nodes are asked whether the cluster is
// formed.
const clusterPoll = 10 * time.Millisecond

// ClusterOptions say how to run a cluster of StartCluster.
type ClusterOptions struct {
	// Masters is the number of masters, at least 1: they share the slots
	// in even, contiguous ranges.
	Masters int
	// ReplicasPerMaster is the number of replicas of each master.
	ReplicasPerMaster int
	// AppendOnly and Wrap are as in Options, for every node.
	AppendOnly bool
	Wrap       []string
	// NodeTimeout is the nodes' cluster-node-timeout; ClusterNodeTimeout
	// when zero. A cluster run under a profiler needs a longer one.
	NodeTimeout time.Duration
}

// Cluster is a Redis Cluster of redis-servers on loopback, each on a free
// port with its own directory. Close stops it.
type Cluster struct {
	// Masters are the masters the cluster was formed with: Masters[i]
	// served the slots SlotRange(i, len(Masters)) at start. Stop one
	// (Close: a crash; Shutdown) to fail it over; WaitTakeover waits
	// until one of its replicas has taken its slots over.
	Masters []*Server
	// Replicas are the replicas the cluster was formed with:
	// Replicas[i] replicated Masters[i] at start.
	Replicas [][]*Server

	admin map[*Server]*redis.Client // one client per node
}

// SlotRange is the range of slots, from and to inclusive, that master i of
// n serves in a cluster that StartCluster formed: as `redis-cli --cluster
// create` splits them, [i*16384/n, (i+1)*16384/n).
func SlotRange(i, n int) (from, to int) {
	return i * ClusterSlots / n, (i+1)*ClusterSlots/n - 1
}

// StartCluster starts the redis-servers of a cluster, joins them (the
// masters' slots assigned as SlotRange says, each replica replicating its
// master) and waits until it is formed: every node says cluster_state:ok,
// every node sees the same slots served by the same masters and replicas,
// and every replica is in sync with its master.
func StartCluster(opts ClusterOptions) (*Cluster, error) {
	if opts.Masters < 1 || opts.ReplicasPerMaster < 0 {
		return nil, fmt.Errorf("redisserver: a cluster of %d masters with %d replicas each: want at least 1 master and no fewer than 0 replicas",
			opts.Masters, opts.ReplicasPerMaster)
	}
	c := &Cluster{
		Masters:  make([]*Server, opts.Masters),
		Replicas: make([][]*Server, opts.Masters),
		admin:    map[*Server]*redis.Client{},
	}
	for i := range c.Replicas {
		c.Replicas[i] = make([]*Server, opts.ReplicasPerMaster)
	}
	// The servers start at once: each takes a few milliseconds.
	nodes := make([]*Server, opts.Masters*(1+opts.ReplicasPerMaster))
	buses := make([]string, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for n := range nodes {
		wg.Go(func() { nodes[n], buses[n], errs[n] = startClusterNode(opts) })
	}
	wg.Wait()
	for n, s := range nodes {
		if s == nil {
			continue
		}
		c.admin[s] = redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, PoolSize: 2})
		if i := n / (1 + opts.ReplicasPerMaster); n%(1+opts.ReplicasPerMaster) == 0 {
			c.Masters[i] = s
		} else {
			c.Replicas[i][n%(1+opts.ReplicasPerMaster)-1] = s
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisserver: cannot start a cluster: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterFormTimeout)
	defer cancel()
	if err := c.form(ctx, nodes, buses); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisserver: cannot form a cluster of %d masters with %d replicas each: %w",
			opts.Masters, opts.ReplicasPerMaster, err)
	}
	return c, nil
}

// startClusterNode starts a redis-server in cluster mode; bus is the port
// of its cluster bus, which is a free port of its own (the default, its
// port + 10000, may be taken or past 65535).
func startClusterNode(opts ClusterOptions) (s *Server, bus string, err error) {
	timeout := cmp.Or(opts.NodeTimeout, ClusterNodeTimeout)
	s, err = start(Options{AppendOnly: opts.AppendOnly, Wrap: opts.Wrap}, "brain-cluster-", func(port, dir string) ([]string, error) {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		bus = strconv.Itoa(p)
		return []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-port", bus, "--cluster-announce-ip", "127.0.0.1", "--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10)}, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("redisserver: cannot start a cluster node: %w", err)
	}
	return s, bus, nil
}

// form joins the started nodes into the cluster and waits until it is
// formed, as redis-cli --cluster create does: each node gets its own
// config epoch, each master its slots, every node meets the first one
// (gossip does the rest), and each replica, once it knows its master,
// replicates it.
func (c *Cluster) form(ctx context.Context, nodes []*Server, buses []string) error {
	ids := make(map[*Server]string, len(nodes))
	for n, s := range nodes {
		id, err := c.admin[s].ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER MYID: %w", s.Addr, err)
		}
		ids[s] = id
		if err := c.admin[s].Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", n+1).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER SET-CONFIG-EPOCH: %w", s.Addr, err)
		}
	}
	for i, s := range c.Masters {
		from, to := SlotRange(i, len(c.Masters))
		if err := c.admin[s].ClusterAddSlotsRange(ctx, from, to).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER ADDSLOTSRANGE %d %d: %w", s.Addr, from, to, err)
		}
	}
	host, port, err := net.SplitHostPort(nodes[0].Addr)
	if err != nil {
		return err
	}
	for _, s := range nodes[1:] {
		if err := c.admin[s].Do(ctx, "CLUSTER", "MEET", host, port, buses[0]).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER MEET %s: %w", s.Addr, nodes[0].Addr, err)
		}
	}
	for i, replicas := range c.Replicas {
		for _, s := range replicas {
			// A replica learns of its master by gossip: until then it
			// answers that the node is unknown.
			err := poll(ctx, func() error {
				return c.admin[s].Do(ctx, "CLUSTER", "REPLICATE", ids[c.Masters[i]]).Err()
			})
			if err != nil {
				return fmt.Errorf("%s: CLUSTER REPLICATE %s: %w", s.Addr, c.Masters[i].Addr, err)
			}
		}
	}
	if err := poll(ctx, func() error { return c.settled(ctx) }); err != nil {
		return err
	}
	for i, s := range c.Masters { // the slots went to the masters given them
		m, err := c.master(ctx, i)
		if err != nil {
			return err
		}
		if m != s {
			return fmt.Errorf("the slots of master %d went to %s, want %s", i, m.Addr, s.Addr)
		}
	}
	return nil
}

// WaitTakeover waits until one of the replicas of killed, a master that
// Close or Shutdown stopped, has taken its slots over and the cluster is
// settled again (as StartCluster waits for it to form: every running node
// says cluster_state:ok and sees the same masters and replicas), and
// returns that replica. It polls the nodes until ctx ends.
func (c *Cluster) WaitTakeover(ctx context.Context, killed *Server) (*Server, error) {
	i := slices.IndexFunc(c.Masters, func(s *Server) bool { return s == killed })
	if i < 0 {
		return nil, fmt.Errorf("redisserver: %s is not one of the cluster's first masters", killed.Addr)
	}
	if !killed.stopped.Load() {
		return nil, fmt.Errorf("redisserver: master %s is still running: stop it first (Close or Shutdown)", killed.Addr)
	}
	if err := poll(ctx, func() error { return c.settled(ctx) }); err != nil {
		return nil, fmt.Errorf("redisserver: no replica of %s took its slots over: %w", killed.Addr, err)
	}
	return c.master(ctx, i)
}

// Addrs are the addresses of the cluster's nodes, masters first: seeds
// for a cluster client.
func (c *Cluster) Addrs() []string {
	var addrs []string
	for _, s := range c.Masters {
		addrs = append(addrs, s.Addr)
	}
	for _, replicas := range c.Replicas {
		for _, s := range replicas {
			addrs = append(addrs, s.Addr)
		}
	}
	return addrs
}

// Close stops every node and removes their directories.
func (c *Cluster) Close() {
	for s, admin := range c.admin {
		_ = admin.Close()
		s.Close()
	}
}

// group is the nodes of master i at start: it and its replicas.
func (c *Cluster) group(i int) []*Server {
	return append([]*Server{c.Masters[i]}, c.Replicas[i]...)
}

// running are the nodes that no Close or Shutdown stopped.
func (c *Cluster) running(nodes []*Server) []*Server {
	return slices.DeleteFunc(slices.Clone(nodes), func(s *Server) bool { return s.stopped.Load() })
}

// master is the node of group i that serves its slots, as the first
// running node sees it.
func (c *Cluster) master(ctx context.Context, i int) (*Server, error) {
	var all []*Server
	for g := range c.Masters {
		all = append(all, c.group(g)...)
	}
	running := c.running(all)
	if len(running) == 0 {
		return nil, errors.New("redisserver: no node of the cluster runs")
	}
	slots, err := c.admin[running[0]].ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	from, _ := SlotRange(i, len(c.Masters))
	for _, r := range slots {
		if int(r.Start) <= from && from <= int(r.End) && len(r.Nodes) > 0 {
			for _, s := range c.group(i) {
				if s.Addr == r.Nodes[0].Addr {
					return s, nil
				}
			}
			return nil, fmt.Errorf("redisserver: slot %d is served by %s, not a node of master %d's group", from, r.Nodes[0].Addr, i)
		}
	}
	return nil, fmt.Errorf("redisserver: no node serves slot %d", from)
}

// settled says why the cluster is not settled, or nil once it is: every
// running node says cluster_state:ok and sees, in CLUSTER NODES, the same
// map: each master's range of slots served by a running node of its
// group, with the group's other running nodes as its replicas, each of
// them in sync. (CLUSTER SLOTS lists a replica only once its replication
// offset has reached the others by gossip: not before the master's first
// write or replication ping, 10 s later on an idle master.)
func (c *Cluster) settled(ctx context.Context) error {
	var want string // the map, as the first node sees it
	for i := range c.Masters {
		for _, s := range c.running(c.group(i)) {
			admin := c.admin[s]
			info, err := admin.ClusterInfo(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: CLUSTER INFO: %w", s.Addr, err)
			}
			if state := redisinfo.Field(info, "cluster_state"); state != "ok" {
				return fmt.Errorf("%s: cluster_state:%s", s.Addr, state)
			}
			nodes, err := admin.ClusterNodes(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: CLUSTER NODES: %w", s.Addr, err)
			}
			got, err := c.slotMap(nodes)
			if err != nil {
				return fmt.Errorf("%s: %w", s.Addr, err)
			}
			if want == "" {
				want = got
			} else if got != want {
				return fmt.Errorf("%s sees the cluster as %s; another node as %s", s.Addr, got, want)
			}
			repl, err := admin.Info(ctx, "replication").Result()
			if err != nil {
				return fmt.Errorf("%s: INFO replication: %w", s.Addr, err)
			}
			if redisinfo.Field(repl, "role") == "slave" && (redisinfo.Field(repl, "master_link_status") != "up" || redisinfo.Field(repl, "master_sync_in_progress") != "0") {
				return fmt.Errorf("replica %s is not in sync with its master: master_link_status:%s", s.Addr, redisinfo.Field(repl, "master_link_status"))
			}
		}
	}
	return nil
}

// slotMap reads a node's CLUSTER NODES as one line, "[from-to master
// ADDR replicas [ADDR...]]" for each range of slots, in order, to compare
// what two nodes see; or says what is wrong in it: a running node that it
// does not know or takes for failing, or a master's range not served by
// a running node of its group, with the group's other running nodes as
// its replicas.
func (c *Cluster) slotMap(nodes string) (string, error) {
	type node struct {
		addr, flags, master string
		slots               []string
	}
	byID := map[string]node{}
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@") // ip:port@cport[,hostname]
		byID[f[0]] = node{addr: addr, flags: f[2], master: f[3], slots: f[8:]}
	}
	seen := map[string]node{} // by address
	for _, n := range byID {
		seen[n.addr] = n
	}
	var b strings.Builder
	for i := range c.Masters {
		from, to := SlotRange(i, len(c.Masters))
		var master string
		var replicas []string
		for _, s := range c.running(c.group(i)) {
			n, ok := seen[s.Addr]
			if !ok {
				return "", fmt.Errorf("node %s is not known", s.Addr)
			}
			for _, bad := range []string{"fail", "fail?", "handshake", "noaddr"} {
				if slices.Contains(strings.Split(n.flags, ","), bad) {
					return "", fmt.Errorf("node %s is seen as %s", s.Addr, n.flags)
				}
			}
			switch {
			case len(n.slots) == 1 && n.slots[0] == fmt.Sprintf("%d-%d", from, to):
				master = s.Addr
			case len(n.slots) > 0:
				return "", fmt.Errorf("node %s serves slots %v, want %d-%d or none", s.Addr, n.slots, from, to)
			default:
				replicas = append(replicas, s.Addr+" of "+byID[n.master].addr)
			}
		}
		if master == "" {
			return "", fmt.Errorf("slots %d-%d are not served by a running node of %s's group", from, to, c.Masters[i].Addr)
		}
		slices.Sort(replicas)
		for _, r := range replicas {
			if !strings.HasSuffix(r, " of "+master) {
				return "", fmt.Errorf("replica %s, want it of %s", r, master)
			}
		}
		fmt.Fprintf(&b, "[%d-%d master %s replicas %v]", from, to, master, replicas)
	}
	return b.String(), nil
}

// poll calls try until it returns nil or ctx ends; then it returns the
// last error try gave.
func poll(ctx context.Context, try func() error) error {
	t := time.NewTicker(clusterPoll)
	defer t.Stop()
	for {
		err := try()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}
