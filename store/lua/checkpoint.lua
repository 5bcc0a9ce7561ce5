-- checkpoint.lua: append events of a running turn, fenced.
-- KEYS: the process's keys.
-- ARGV: pid, shard, now, unblock template (unused: ""), lease value, token,
--       events (JSON) ...
-- Returns {'OK'} or {'FENCED'}.
local p = process(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fenced(p, ARGV[5], ARGV[6]) then return {'FENCED'} end
for i = 7, #ARGV do append(p, ARGV[i]) end
redis.call('HSET', p.proc, 'updated_at', p.now)
return {'OK'}
