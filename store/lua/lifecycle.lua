-- lifecycle.lua, the second part of the prelude (scripts.go): the part of
-- the lifecycle table the scripts fire.

-- The events of lifecycle/transitions.go that scripts fire, by the states
-- they leave. TestLuaLifecycle checks every state against lifecycle.Fire.
local TRANSITIONS = {
  wake = {READY = 'RUNNING'},
  user_input = {BLOCKED = 'READY'},
  recover = {RUNNING = 'READY'},
  await_user = {RUNNING = 'BLOCKED'},
  continue = {RUNNING = 'READY'},
  finish = {RUNNING = 'DONE', READY = 'DONE', BLOCKED = 'DONE', PAUSED = 'DONE'},
  fail = {RUNNING = 'FAILED'},
}

-- fire returns the state event leads to from state, or nil when the
-- lifecycle forbids it.
local function fire(event, from)
  local row = TRANSITIONS[event]
  if row == nil then return nil end
  return row[from]
end
