-- steal.lua: take for a node the wakes that have waited undelivered for at
-- least min_age ms in streams it is not home to (store.HomeStreams): their
-- home node did not take them (busy, stopped, or not yet known to the
-- others), so another does. An entry's age is Redis's time against its
-- id, so the nodes' clocks do not matter; younger ones stay for their home.
-- KEYS: wake streams. ARGV: consumer (the node), min age ms, most wakes
-- to take in all.
-- Returns {stream, entry id, pid, ...}.
local consumer, min_age, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local born_by = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - min_age
local out = {}
for _, stream in ipairs(KEYS) do
  local room = count - #out / 3
  if room <= 0 then break end
  -- The group's last delivered id, unless nothing waits after it (lag 0;
  -- a lag Redis cannot tell, after a trim, is looked at). A stream gone
  -- (an error) has nothing to take: an idle node's look costs one call.
  local last
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  if not groups.err then
    for _, g in ipairs(groups) do
      local f = fields(g)
      if f.name == GROUP and f.lag ~= 0 then last = f['last-delivered-id'] end
    end
  end
  if last then
    -- Entries are in id order, so the old enough ones come first.
    local old = 0
    for _, e in ipairs(redis.call('XRANGE', stream, '(' .. last, '+', 'COUNT', room)) do
      if tonumber(string.sub(e[1], 1, string.find(e[1], '-', 1, true) - 1)) > born_by then break end
      old = old + 1
    end
    if old > 0 then
      local got = redis.call('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', old, 'STREAMS', stream, '>')
      for _, e in ipairs(got[1][2]) do
        out[#out + 1], out[#out + 2], out[#out + 3] = stream, e[1], fields(e[2]).pid
      end
    end
  end
end
return out
