-- commit.lua: end a turn, fenced, in one step: append its last events, fire
-- its lifecycle event, give the lease and the wake up, apply the wake rule
-- to what is left in the inbox, and post a finished worker's result to its
-- parent.
-- KEYS: the process's keys, then the parent's keys when notifying.
-- ARGV: pid, shard, now (ms), at (events' time), lease value, token,
--       event, by (who ends the turn), wake stream, wake entry id, notify
--       ('1'/'0'), parent pid, parent shard, kind, from, content, message
--       at (ms), idempotency key, idempotency ttl, the number of events
--       the caller knows the log to hold ('' = not known), the turn's input
--       and output tokens, events (JSON) ...
-- Returns {'FENCED'} or {'OK', status (the prelude's), gapless ('1'/'0'),
-- {id of each event}, made: the events the script wrote itself, as write in
-- the prelude lists them, only when gapless}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fenced(p, ARGV[5], ARGV[6], rec(p).fence) then return {'FENCED'} end
local event, by = ARGV[7], ARGV[8]
local to = fire(event, 'RUNNING')
if to == nil then return redis.error_reply('store: commit: event ' .. event .. ' does not end a turn') end
local gapless = ends_at(p, ARGV[20])
local ids = {}
for i = 23, #ARGV do ids[#ids + 1] = append(p, ARGV[i]) end

local r = rec(p)
local state = r.state
-- The turn's tokens join the totals, in the HSET that ends the turn.
local tokens = {}
local used_in, used_out = tonumber(ARGV[21]), tonumber(ARGV[22])
if used_in > 0 or used_out > 0 then
  tokens = {'tokens_in', tostring((tonumber(r.tokens_in) or 0) + used_in),
            'tokens_out', tostring((tonumber(r.tokens_out) or 0) + used_out)}
end
local paused_in_turn = state == 'PAUSED' and r.paused_from == 'RUNNING'
if state == 'RUNNING' or (paused_in_turn and to ~= 'READY' and to ~= 'BLOCKED') then
  -- (A finished or failed turn leaves a pause nothing to hold.)
  set_state(p, state, to, nil, tokens)
  write(p, 'change', {r.turn or '', by, state, to, event})
elseif paused_in_turn then
  -- Paused during the turn: stay paused; resume lands where the turn led.
  r.paused_from, r.updated_at = to, p.now
  r.version = tostring((tonumber(r.version) or 0) + 1)
  set_fields(p, {'paused_from', to, 'updated_at', p.now, 'version', r.version}, tokens)
else
  -- Any other state (DONE, FAILED, READY or BLOCKED after a pause and a
  -- resume, PAUSED again after that) was set by someone else during the
  -- turn: the events are kept, the state is theirs.
  r.updated_at = p.now
  set_fields(p, {'updated_at', p.now}, tokens)
end
-- The turn gives its lease and its wake up. The field is deleted, not
-- emptied: the claim of an older brain sharing this Redis reads any value
-- as a wake entry.
redis.call('DEL', p.lease)
redis.call('HDEL', p.proc, 'wake')
r.wake = false
drop_wake(ARGV[9], ARGV[10])
wake_rule(p)

if ARGV[11] == '1' then
  local parent = process(KEYS, 7, ARGV[12], ARGV[13], p.now, p.at)
  post(parent, ARGV[14], ARGV[15], ARGV[16], ARGV[17], ARGV[18], ARGV[19], 0) -- 0: a result is never refused
end
-- What the script wrote after the caller's events (the state change, an
-- unblocking one): the caller cannot know it otherwise. Gapless, nothing
-- came between.
local made = {}
if gapless == '1' then made = p.made or {} end
return {'OK', status(p), gapless, ids, made}
