-- renew.lua: extend a lease that is still ours.
-- KEYS: the lease, then, for a turn's lease, its process's record.
-- ARGV: lease value, ttl ms.
-- Returns 0 when lost, else 1; 2 when the lease is a turn's and its
-- process is no longer RUNNING (paused, stopped or failed meanwhile).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if KEYS[2] and redis.call('HGET', KEYS[2], 'state') ~= 'RUNNING' then return 2 end
return 1
