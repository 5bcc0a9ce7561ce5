-- inbox.lua, the last part of the prelude (scripts.go): the wake queue, the
-- wake rule and the post semantics, the Redis side of package inbox (its
-- doc.go has the rule as a table). TestLuaWakeRule checks closed, unblocks
-- and bounded against inbox.OnPost; the conformance suite of package
-- inboxtest checks the rest through the store.

-- closed reports whether a process in state takes no message; unblocks,
-- whether a message of kind unblocks a BLOCKED process that waits for
-- waiting (the record's waiting_for: false, or 'approval' while tool calls
-- wait for a person's decision, when a user's message waits for them).
local function closed(state) return state == 'DONE' or state == 'FAILED' end
local function unblocks(kind, waiting)
  if kind == 'operator' or kind == 'approval' then return true end
  return kind == 'user' and waiting ~= 'approval'
end

-- The record's queued is '1' while the process is on its wake stream, and
-- '0' or missing when not: set rather than deleted, so that it can go in
-- the HSET of a state change.

-- push adds the process to its wake stream, and on a Cluster touches the
-- stream's bell key (its value means nothing: the write is what rings the
-- nodes); the caller marks it queued.
local function push(p)
  local engine = rec(p).engine
  redis.call('XADD', wake_key(p, engine), '*', 'pid', p.pid)
  if BELL then redis.call('SET', bell_key(p, engine), '') end
end

-- enqueue puts the process on its wake stream unless it is there already.
local function enqueue(p)
  local r = rec(p)
  if r.queued == '1' then return end
  redis.call('HSET', p.proc, 'queued', '1')
  r.queued = '1'
  push(p)
end

-- dequeue records that the process is off its wake stream.
local function dequeue(p)
  local r = rec(p)
  if r.queued == '1' then
    redis.call('HSET', p.proc, 'queued', '0')
    r.queued = '0'
  end
end

-- drop_wake acknowledges a wake entry; Store.TrimWakes deletes it later,
-- with the others every node is done with.
local function drop_wake(stream, id)
  redis.call('XACK', stream, GROUP, id)
end

-- wake_rule judges the inbox of a process that has just changed: READY with
-- anything in the inbox is enqueued; BLOCKED with a message that unblocks
-- it fires user_input (by the sender of the first such message) and is
-- enqueued. Other states never are.
--
-- added, when given, is the one message just added to the inbox: a BLOCKED
-- process never holds a message that unblocks it (every step that leaves
-- one BLOCKED applies this rule), so only the new message can unblock it
-- and the inbox need not be scanned.
local function wake_rule(p, added)
  local state = rec(p).state
  if state == 'READY' then
    if redis.call('XLEN', p.inbox) > 0 then enqueue(p) end
  elseif state == 'BLOCKED' then
    local msgs = {added}
    if added == nil then
      msgs = {}
      for _, entry in ipairs(redis.call('XRANGE', p.inbox, '-', '+')) do
        msgs[#msgs + 1] = message(entry[2])
      end
    end
    for _, msg in ipairs(msgs) do
      if unblocks(msg.kind, rec(p).waiting_for) then
        local queued = rec(p).queued == '1'
        set_state(p, state, fire('user_input', state), nil, {'queued', '1'}) -- enqueue, in one HSET
        write(p, 'unblock', {sender(msg)})
        if not queued then push(p) end
        return
      end
    end
  end
end

-- bounded reports whether a message of kind posted to a process in state
-- counts against the inbox limit. A worker's result and a system notice
-- never do (nothing may lose them, and a process's workers bound them); a
-- user or operator message to a BLOCKED process does not either: it wakes
-- the process, whose next turn drains the inbox whole, so timer ticks
-- that piled up meanwhile never lock the user out.
local function bounded(kind, state, waiting)
  if kind == 'process_event' or kind == 'system' or kind == 'approval' then return false end
  if state == 'BLOCKED' and unblocks(kind, waiting) then return false end
  return true
end

-- steered returns what the steering of p (the record's steering: what a
-- user's message does while a turn runs) makes of a message of kind
-- posted to p in state: 'BUSY' (refused: 'reject'), 'INTERRUPT' (stored,
-- and the node running the turn signalled: 'interrupt') or nil (the rest
-- of the rule alone). Only a user's message to a RUNNING process reads the
-- field, so that no other post pays for it, and no other script (rec does
-- not load it).
local function steered(p, state, kind)
  if state ~= 'RUNNING' or kind ~= 'user' then return nil end
  local steering = redis.call('HGET', p.proc, 'steering')
  if steering == 'reject' then return 'BUSY' end
  if steering == 'interrupt' then return 'INTERRUPT' end
  return nil
end

-- forget_approvals: the process waits for no decision any more (its turn
-- settled its calls, or it was closed).
local function forget_approvals(p)
  local r = rec(p)
  if not r.waiting_for then return end
  r.waiting_for, r.approvals = false, false
  redis.call('HDEL', p.proc, 'waiting_for', 'approvals')
  redis.call('DEL', approvals_key(p))
  redis.call('SREM', waiting_key(p), p.pid)
end

-- decide takes the decision of an approval message on call of p, made by
-- a decider ('user', or 'operator' for operators and the system): it is
-- taken once, for a call that waits for one and that the decider may
-- decide (an operator any, a user those its recipe lets the user decide),
-- and the call is marked decided; it returns nil then, else why not:
-- 'NOTPENDING', 'DECIDED' or 'OPERATORONLY'.
local function decide(p, call, decider)
  local by = redis.call('HGET', approvals_key(p), call)
  if not by then return 'NOTPENDING' end
  if by == '1' then return 'DECIDED' end
  if by == 'operator' and decider ~= 'operator' then return 'OPERATORONLY' end
  redis.call('HSET', approvals_key(p), call, '1')
  return nil
end

-- post adds a message to the inbox of p and applies the wake rule. It
-- returns a status (OK, DUP, NOTFOUND, CLOSED, BUSY, FULL, NOTPENDING,
-- DECIDED, OPERATORONLY) and the message id. BUSY: a user's message to a
-- RUNNING process that refuses them (see steered); FULL: the inbox holds
-- limit messages already (limit > 0; see bounded). call is the call an
-- approval decides ('' for other kinds) and decider who decides it:
-- NOTPENDING, DECIDED and OPERATORONLY refuse one (see decide). A user's
-- message to a RUNNING process whose steering is 'interrupt' is stored and
-- signals the node that runs the turn. trace, when given, is the W3C
-- traceparent of who posted the message: the entry's fifth field, written
-- only then, so that a post without one costs what it did (the claim
-- returns it).
local function post(p, kind, from, content, at, idem_key, idem_ttl, limit, call, decider, trace)
  local state = rec(p).state
  if not state then return 'NOTFOUND', '' end
  if idem_key ~= '' then
    local first = redis.call('HGET', p.idem, idem_key)
    if first then
      redis.call('PEXPIRE', p.idem, idem_ttl)
      return 'DUP', first
    end
  end
  if closed(state) then return 'CLOSED', '' end
  local steer = steered(p, state, kind)
  if steer == 'BUSY' then return 'BUSY', '' end
  if limit > 0 and bounded(kind, state, rec(p).waiting_for) and redis.call('XLEN', p.inbox) >= limit then
    return 'FULL', ''
  end
  if kind == 'approval' then
    local refused = decide(p, call, decider)
    if refused then return refused, '' end
  end
  local id
  if trace then
    id = redis.call('XADD', p.inbox, '*', 'kind', kind, 'from', from, 'content', content, 'at', at, 'traceparent', trace)
  else
    id = redis.call('XADD', p.inbox, '*', 'kind', kind, 'from', from, 'content', content, 'at', at)
  end
  if idem_key ~= '' then
    redis.call('HSET', p.idem, idem_key, id)
    redis.call('PEXPIRE', p.idem, idem_ttl)
  end
  wake_rule(p, {kind = kind, from = from})
  if steer == 'INTERRUPT' then signal(p, 'interrupt') end
  return 'OK', id
end
