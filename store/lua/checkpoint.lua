-- checkpoint.lua: append events of a running turn, fenced, and drain into
-- the log, in the same step, the inbox messages that steer the turn.
-- KEYS: the process's first 3 keys (up to lease), 4 (up to inbox) when
--       draining.
-- ARGV: pid, base (of its partition's keys), now, at, lease value, token, the number of events
--       the caller knows the log to hold ('' = not known), the kinds of
--       message to drain (each between spaces: ' operator user '; '' =
--       none), then, only when draining, the turn's id; then the events
--       (JSON).
-- Returns {'OK', gapless ('1'/'0'), {id of each event}, made} or
-- {'FENCED'}; made lists the drained messages' events (see write in the
-- prelude).
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fenced(p, ARGV[5], ARGV[6], redis.call('HGET', p.proc, 'fence')) then return {'FENCED'} end
local gapless = ends_at(p, ARGV[7])
local kinds, first = ARGV[8], 9
if kinds ~= '' then first = 10 end
local ids = {}
for i = first, #ARGV do ids[#ids + 1] = append(p, ARGV[i]) end
if kinds ~= '' then
  -- The drain: each message of those kinds becomes an inbox_message event
  -- marked as arrived during the turn and leaves the inbox in this same
  -- step, so it is applied exactly once. The others stay, in order, for
  -- the next turn.
  local drained = {}
  for _, e in ipairs(redis.call('XRANGE', p.inbox, '-', '+')) do
    local msg = message(e[2])
    if msg.kind and string.find(kinds, ' ' .. msg.kind .. ' ', 1, true) then
      write(p, 'steer', {ARGV[9], sender(msg) or '', e[1], msg.kind or '', msg.from or '', msg.content or ''})
      drained[#drained + 1] = e[1]
    end
  end
  if #drained > 0 then redis.call('XDEL', p.inbox, unpack(drained)) end
end
redis.call('HSET', p.proc, 'updated_at', p.now)
return {'OK', gapless, ids, p.made or {}}
