package redisserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func cpu(t *testing.T, r *redis.Client) float64 {
	s := r.Info(context.Background(), "cpu").Val()
	var tot float64
	for _, l := range strings.Split(s, "\r\n") {
		if strings.HasPrefix(l, "used_cpu_sys:") || strings.HasPrefix(l, "used_cpu_user:") {
			v, _ := strconv.ParseFloat(l[strings.Index(l, ":")+1:], 64)
			tot += v
		}
	}
	return tot
}

func TestZZPoll(t *testing.T) {
	c, err := StartCluster(ClusterOptions{Masters: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	r := redis.NewClient(&redis.Options{Addr: c.Masters[0].Addr})
	lib := `#!lua name=zz
redis.register_function{function_name='poll', callback=function(keys, args)
  local out = {}
  for i = 3, #args do
    local r = redis.pcall('XREADGROUP', 'GROUP', 'g', args[1], 'COUNT', args[2], 'STREAMS', args[i], '>')
    if type(r) == 'table' and r.err == nil then out[#out+1] = r end
  end
  return out
end, flags={'allow-cross-slot-keys'}}`
	if err := r.FunctionLoadReplace(ctx, lib).Err(); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for i := range 85 {
		k := fmt.Sprintf("{%d}s", i)
		ks = append(ks, k)
		r.XGroupCreateMkStream(ctx, k, "g", "0")
	}
	const rounds = 3000
	a := cpu(t, r)
	for range rounds {
		r.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range ks {
				p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{k, ">"}, Count: 1, Block: -1})
			}
			return nil
		})
	}
	b := cpu(t, r)
	args := append([]interface{}{"FCALL", "poll", 0, "c", 1}, toI(ks)...)
	for range rounds {
		r.Do(ctx, args...)
	}
	c2 := cpu(t, r)
	t.Logf("pipeline %.1f µs/round, script %.1f µs/round", (b-a)*1e6/rounds, (c2-b)*1e6/rounds)
}

func toI(s []string) []interface{} {
	var o []interface{}
	for _, x := range s {
		o = append(o, x)
	}
	return o
}
