--[[
  A person's change of a rollout's state (approve, pause, resume, cancel),
  when its current state allows it. Cancel also ends every project not yet
  claimed (`pending` → `cancelled`): none of them will ever start; the
  operations already started are cancelled by the caller.

  KEYS[1] rollout hash
  KEYS[2] the rollout's project list
  KEYS[3] the rollout's project states hash
  KEYS[4] the active rollouts set

  ARGV[1] allowed current states, comma-separated
  ARGV[2] new state
  ARGV[3] rollout id
  ARGV[4] '1': reset the failure budget (budgetBase = the failures so far)
  ARGV[5..] field/value pairs written with the state ('-' as a value deletes the field)

  Returns {outcome, state before}: outcome 'ok', 'missing' or 'refused'.
]]
local function listed(csv, value) return string.find(',' .. csv .. ',', ',' .. value .. ',', 1, true) ~= nil end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', ''} end
if not listed(ARGV[1], state) then return {'refused', state} end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
for i = 5, #ARGV, 2 do
  if ARGV[i + 1] == '-' then redis.call('HDEL', KEYS[1], ARGV[i])
  else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
if ARGV[4] == '1' then
  local failures = tonumber(redis.call('HGET', KEYS[1], 'c_failed') or '0') +
    tonumber(redis.call('HGET', KEYS[1], 'c_outcome_unknown') or '0')
  redis.call('HSET', KEYS[1], 'budgetBase', failures)
end
if ARGV[2] == 'cancelled' then
  local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
  local nextIndex = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
  local ended = 0
  -- One LRANGE of the projects not yet claimed, one HMGET of their states: linear in them.
  if nextIndex < total then
    local remaining = redis.call('LRANGE', KEYS[2], nextIndex, total - 1)
    for first = 1, #remaining, 1000 do
      local chunk = {}
      for index = first, math.min(first + 999, #remaining) do chunk[#chunk + 1] = remaining[index] end
      local states = redis.call('HMGET', KEYS[3], unpack(chunk))
      for index, projectId in ipairs(chunk) do
        if states[index] == 'pending' then
          redis.call('HSET', KEYS[3], projectId, 'cancelled')
          ended = ended + 1
        end
      end
    end
  end
  -- Only when some ended: Lua writes a negated 0 as "-0", which HINCRBY refuses.
  if ended > 0 then
    redis.call('HINCRBY', KEYS[1], 'c_pending', -ended)
    redis.call('HINCRBY', KEYS[1], 'c_cancelled', ended)
  end
  redis.call('HSET', KEYS[1], 'next', total)
  if tonumber(redis.call('HGET', KEYS[1], 'c_running') or '0') == 0
    and tonumber(redis.call('HGET', KEYS[1], 'p_running') or '0') == 0 then
    redis.call('SREM', KEYS[4], ARGV[3])
  end
end
return {'ok', state}
