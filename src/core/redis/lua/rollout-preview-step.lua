--[[
  One step of a rollout's preview (--preview-action; docs/ARCHITECTURE.md
  "Rollouts"): records how one project's preview operation ended (optional;
  idempotent: a preview already ended is left as it is), then — while the
  rollout is `previewing` — claims the next previews to start, up to the
  rollout's concurrency, over the whole selection (previews have no waves).
  Once every preview has ended the rollout moves to `awaiting-approval`
  (always: a preview is there for a person to look at before anything
  changes). A cancelled rollout ends the previews not yet claimed. A preview
  claimed here is `starting` until its operation exists (rollout-started.lua
  on the preview hashes); the caller creates it with the idempotency key
  rollout:<id>:preview:<project>, so a crash between claim and creation is
  repaired by any later step (the sweep) without a second operation.
  Preview ends never count against the failure budget (c_* are the real run's).

  KEYS[1] rollout hash
  KEYS[2] the rollout's project list (wave order)
  KEYS[3] the rollout's preview states hash
  KEYS[4] the active rollouts set

  ARGV[1] now (ISO 8601)
  ARGV[2] rollout id
  ARGV[3] project id whose preview ended ('' for none)
  ARGV[4] its end: succeeded | failed | cancelled | outcome_unknown

  Counts live in the rollout hash as p_<bucket>, the cursor as pnext; `starting` counts as running.
  Returns {state after, events as a JSON array ('awaiting-approval'), claimed project ids...}.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', '[]'} end
if not redis.call('HGET', KEYS[1], 'previewAction') then return {state, '[]'} end
local function num(field) return tonumber(redis.call('HGET', KEYS[1], field) or '0') end
local function bucket(s) if s == 'starting' then return 'running' end return s end
local events = {}

if ARGV[3] ~= '' then
  local current = redis.call('HGET', KEYS[3], ARGV[3])
  if current == 'pending' or current == 'starting' or current == 'running' then
    redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
    redis.call('HINCRBY', KEYS[1], 'p_' .. bucket(current), -1)
    redis.call('HINCRBY', KEYS[1], 'p_' .. ARGV[4], 1)
  end
end

local total = num('total')
local nextIndex = num('pnext')
local claimed = {}
if state == 'previewing' then
  local running = num('p_running')
  local concurrency = num('concurrency')
  if nextIndex < total and running < concurrency then
    for _, projectId in ipairs(redis.call('LRANGE', KEYS[2], nextIndex, nextIndex + concurrency - running - 1)) do
      redis.call('HSET', KEYS[3], projectId, 'starting')
      redis.call('HINCRBY', KEYS[1], 'p_pending', -1)
      redis.call('HINCRBY', KEYS[1], 'p_running', 1)
      table.insert(claimed, projectId)
      nextIndex = nextIndex + 1
      running = running + 1
    end
  end
  redis.call('HSET', KEYS[1], 'pnext', nextIndex)
  if nextIndex >= total and running == 0 then
    state = 'awaiting-approval'
    redis.call('HSET', KEYS[1], 'state', state, 'previewedAt', ARGV[1])
    table.insert(events, 'awaiting-approval')
  end
elseif state == 'cancelled' and nextIndex < total then
  -- Previews never claimed never start.
  local ended = 0
  for _, projectId in ipairs(redis.call('LRANGE', KEYS[2], nextIndex, total - 1)) do
    if redis.call('HGET', KEYS[3], projectId) == 'pending' then
      redis.call('HSET', KEYS[3], projectId, 'cancelled')
      ended = ended + 1
    end
  end
  -- Only when some ended: Lua writes a negated 0 as "-0", which HINCRBY refuses.
  if ended > 0 then
    redis.call('HINCRBY', KEYS[1], 'p_pending', -ended)
    redis.call('HINCRBY', KEYS[1], 'p_cancelled', ended)
  end
  redis.call('HSET', KEYS[1], 'pnext', total)
end

-- The event stays marked until a process has published its webhook (as rollout-step.lua does).
for _, event in ipairs(events) do redis.call('HSET', KEYS[1], 'unannounced:' .. event, '1') end
local function unannounced()
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 12) == 'unannounced:' then return true end
  end
  return false
end

-- An ended rollout leaves the sweep once none of its operations, previews included, is left to
-- record, nor an event to publish.
if (state == 'succeeded' or state == 'failed' or state == 'cancelled') then
  if num('c_running') == 0 and num('p_running') == 0 and not unannounced() then
    redis.call('SREM', KEYS[4], ARGV[2])
  else redis.call('SADD', KEYS[4], ARGV[2]) end
end
local result = {state, #events == 0 and '[]' or cjson.encode(events)}
for _, projectId in ipairs(claimed) do table.insert(result, projectId) end
return result
