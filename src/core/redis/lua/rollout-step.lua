--[[
  One step of a rollout (docs/ARCHITECTURE.md "Rollouts"): records how one
  project's operation ended (optional; idempotent: a project already ended is
  left as it is), checks the failure budget, then — while the rollout runs —
  claims the next projects of the current wave to start, up to its
  concurrency, moving to the next wave once every project of this one has
  ended, and finishing the rollout after the last. A project claimed here is
  `starting` until its operation exists (rollout-started.lua); the caller
  creates that operation with an idempotency key of the rollout and project,
  so a crash between the claim and the creation is repaired by any later
  step (the sweep) without a second operation.

  KEYS[1] rollout hash
  KEYS[2] the rollout's project list (wave order)
  KEYS[3] the rollout's project states hash
  KEYS[4] the active rollouts set
  KEYS[5] the rollout's in-flight set (project ids `starting` or `running`: all the sweep reads)

  ARGV[1] now (ISO 8601)
  ARGV[2] rollout id
  ARGV[3] project id whose operation ended ('' for none)
  ARGV[4] its end: succeeded | failed | cancelled | outcome_unknown

  Counts live in the rollout hash as c_<bucket>; `starting` counts as running, and
  the in-flight set holds exactly the projects c_running counts.
  Its events are also kept as fields unannounced:paused:<now> / unannounced:finished until published.
  Returns {state after, events as a JSON array ('paused', 'finished'), claimed project ids...}.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', '[]'} end
local function num(field) return tonumber(redis.call('HGET', KEYS[1], field) or '0') end
local function bucket(s) if s == 'starting' then return 'running' end return s end
local events = {}

if ARGV[3] ~= '' then
  local current = redis.call('HGET', KEYS[3], ARGV[3])
  if current == 'pending' or current == 'starting' or current == 'running' then
    redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
    redis.call('SREM', KEYS[5], ARGV[3])
    redis.call('HINCRBY', KEYS[1], 'c_' .. bucket(current), -1)
    redis.call('HINCRBY', KEYS[1], 'c_' .. ARGV[4], 1)
  end
end

-- The budget is checked at every step, not only when an end is recorded while running: ends
-- recorded while a person had paused it count too, so resuming past it stays an admin's call.
local failures = num('c_failed') + num('c_outcome_unknown') - num('budgetBase')
if failures > num('maxFailures') then
  local reason = 'the failure budget is exceeded: ' .. failures .. ' failed, at most ' ..
    num('maxFailures') .. ' allowed; no new operation starts (rollout resume goes on, as an admin)'
  if state == 'running' then
    state = 'paused'
    redis.call('HSET', KEYS[1], 'state', 'paused', 'pausedKind', 'budget', 'pausedAt', ARGV[1], 'pausedReason', reason)
    table.insert(events, 'paused')
  elseif state == 'paused' and redis.call('HGET', KEYS[1], 'pausedKind') ~= 'budget' then
    redis.call('HSET', KEYS[1], 'pausedKind', 'budget', 'pausedReason', reason)
  end
end

local claimed = {}
if state == 'running' then
  local waves = cjson.decode(redis.call('HGET', KEYS[1], 'waves'))
  local wave = num('wave')
  local nextIndex = num('next')
  local running = num('c_running')
  local concurrency = num('concurrency')
  while true do
    local waveEnd = waves[wave + 1]
    if nextIndex < waveEnd then
      -- One LRANGE of the projects to claim (a LINDEX each walks the list).
      local count = math.min(waveEnd - nextIndex, concurrency - running)
      if count > 0 then
        for _, projectId in ipairs(redis.call('LRANGE', KEYS[2], nextIndex, nextIndex + count - 1)) do
          redis.call('HSET', KEYS[3], projectId, 'starting')
          redis.call('SADD', KEYS[5], projectId)
          redis.call('HINCRBY', KEYS[1], 'c_pending', -1)
          redis.call('HINCRBY', KEYS[1], 'c_running', 1)
          table.insert(claimed, projectId)
          nextIndex = nextIndex + 1
          running = running + 1
        end
      end
      break
    end
    -- Every project of the wave has started: the next wave waits until they have all ended.
    if running > 0 then break end
    if wave + 1 >= #waves then
      local bad = num('c_failed') + num('c_outcome_unknown') + num('c_cancelled')
      state = bad == 0 and 'succeeded' or 'failed'
      redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', ARGV[1])
      redis.call('HDEL', KEYS[1], 'pausedReason', 'pausedKind')
      table.insert(events, 'finished')
      break
    end
    wave = wave + 1
    if redis.call('HGET', KEYS[1], 'pauseBetween') == '1' then
      state = 'paused'
      redis.call('HSET', KEYS[1], 'state', 'paused', 'pausedKind', 'wave', 'pausedAt', ARGV[1],
        'pausedReason', 'wave ' .. wave .. ' of ' .. #waves .. ' ended (--pause-between); rollout resume starts wave ' .. (wave + 1))
      table.insert(events, 'paused')
      break
    end
  end
  redis.call('HSET', KEYS[1], 'wave', wave, 'next', nextIndex)
end

-- Each event stays marked (a field unannounced:<event>) until a process has published its webhook,
-- so one whose process died before publishing is published by the sweep (publishing is keyed: once).
-- A pause's mark holds its reason: the webhook tells that pause even when published after a resume.
for _, event in ipairs(events) do
  if event == 'paused' then
    redis.call('HSET', KEYS[1], 'unannounced:paused:' .. ARGV[1], redis.call('HGET', KEYS[1], 'pausedReason') or '')
  else
    redis.call('HSET', KEYS[1], 'unannounced:' .. event, '1')
  end
end
local function unannounced()
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 12) == 'unannounced:' then return true end
  end
  return false
end

-- An ended rollout leaves the sweep once none of its operations (previews too) is left to record,
-- nor an event to publish.
if (state == 'succeeded' or state == 'failed' or state == 'cancelled') and num('c_running') == 0
  and num('p_running') == 0 and not unannounced() then
  redis.call('SREM', KEYS[4], ARGV[2])
end
local result = {state, #events == 0 and '[]' or cjson.encode(events)}
for _, projectId in ipairs(claimed) do table.insert(result, projectId) end
return result
