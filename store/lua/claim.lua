-- claim.lua: take a wake. A READY process is leased, moved to RUNNING and
-- its inbox drained into the log; a RUNNING process whose lease is gone (its
-- node died) is leased again and recovered into its interrupted turn.
-- KEYS: the process's first 4 keys (up to inbox).
-- ARGV: pid, base (of its partition's keys), now, at, node, lease ttl ms, turn id, wake stream, wake
--       entry id, has record ('1': the caller has the process's record,
--       and the reply carries only its status, see the prelude)
-- Returns {'NOTFOUND'}, {'BUSY'}, {'IDLE', state} or
-- {'OK', token, recovered, turn, turn_at, record or status, made, events in
-- the log, traces}: made lists the events the claim wrote (see write in the
-- prelude); traces, only when some drained message has one, their
-- traceparents. The log before them the caller reads itself, right after the
-- script and outside Lua (Store.ClaimAfter): a stream entry read into Lua
-- and returned costs Redis several times what the XRANGE itself does.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local node, ttl, turn = ARGV[5], ARGV[6], ARGV[7]
local stream, entry = ARGV[8], ARGV[9]
local has_record = ARGV[10] == '1'
local wake = stream .. ' ' .. entry
local by = 'node:' .. node

local r = rec(p)
if not r.state then
  drop_wake(stream, entry)
  return {'NOTFOUND'}
end
local holder = r.wake
local state = r.state
local claimable = state == 'READY' or state == 'RUNNING'
-- A process that may start a turn takes its lease here if it is free (one
-- call where EXISTS and SET would be two).
local token = tostring((tonumber(r.fence) or 0) + 1)
local busy
if claimable then
  busy = not redis.call('SET', p.lease, node .. '|' .. token, 'NX', 'PX', ttl)
else
  busy = redis.call('EXISTS', p.lease) == 1
end
if busy then
  -- A turn is running. Its own wake stays pending so that another node
  -- recovers the process if this one dies; any other wake is redundant: the
  -- running turn's commit applies the wake rule again.
  if holder ~= wake then
    drop_wake(stream, entry)
    dequeue(p)
  end
  return {'BUSY'}
end
if not claimable then
  dequeue(p)
  drop_wake(stream, entry)
  return {'IDLE', state}
end

-- The lease was free: the wake of any earlier holder is stale; this one
-- takes over.
if holder and holder ~= wake then
  local sp = string.find(holder, ' ', 1, true)
  drop_wake(string.sub(holder, 1, sp - 1), string.sub(holder, sp + 1))
end
local recovered = '0'
local turn_at
local traces -- nil: the reply ends without them
-- What the claim sets with its state, in the same HSET: off the wake
-- stream, the lease's token, the turn and the wake it holds.
local function claimed() return {'queued', '0', 'fence', token, 'turn', turn, 'turn_at', turn_at, 'wake', wake} end
if state == 'READY' then
  turn_at = write(p, 'turn_start', {turn, by})
  set_state(p, state, fire('wake', state), nil, claimed())
  write(p, 'wake', {turn, by})
  -- The drain: each pending message becomes an inbox_message event and
  -- leaves the inbox in this same step, so it is drained exactly once.
  local drained = {}
  for _, e in ipairs(redis.call('XRANGE', p.inbox, '-', '+')) do
    local msg = message(e[2])
    write(p, 'inbox', {turn, sender(msg) or '', e[1], msg.kind or '', msg.from or '', msg.content or ''})
    drained[#drained + 1] = e[1]
    local trace = e[2][10] -- the traceparent, the optional fifth field (post)
    if trace then
      traces = traces or {}
      traces[#traces + 1] = trace
    end
  end
  if #drained > 0 then redis.call('XDEL', p.inbox, unpack(drained)) end
else
  -- Recovery: no drain (messages that arrived meanwhile wait for the next
  -- wake, which the commit's wake rule enqueues).
  recovered = '1'
  if r.turn then
    turn = r.turn
    turn_at = redis.call('HGET', p.proc, 'turn_at')
  else
    turn_at = write(p, 'turn_start', {turn, by})
  end
  local ready = fire('recover', state)
  set_state(p, state, ready)
  write(p, 'recover', {turn, by})
  set_state(p, ready, fire('wake', ready), nil, claimed())
  write(p, 'wake', {turn, by})
end

local record
if has_record then record = status(p) else record = redis.call('HGETALL', p.proc) end
return {'OK', tostring(token), recovered, turn, turn_at, record, p.made, redis.call('XLEN', p.events), traces}
