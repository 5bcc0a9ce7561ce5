-- release.lua: give a lease up if it is still ours.
-- KEYS: the lease. ARGV: lease value. Returns 1, or 0 when it was not ours.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
