-- renew.lua: extend a lease that is still ours.
-- KEYS: the lease. ARGV: lease value, ttl ms. Returns 1, or 0 when lost.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
