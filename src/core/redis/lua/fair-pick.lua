--[[
  Chooses the next slice of inspection work, fairly (docs/adr/0010-fair-share-inspections.md),
  and records it before its job is added, so a slice whose job never made it
  into BullMQ is found and added again (fair-queue.ts reconcile):
  - the buffer: no pick while the slices handed out (queued or running) fill
    the live workers' slots plus one; a slice whose job is held by a worker
    whose slots expired (killed: BullMQ sees the stall only after its lock
    lapses) does not count, so the live workers stay fed meanwhile;
  - the class: high before normal before low, except every AGING-th pick
    serves the lowest class with work, so no batch starves;
  - in the class, the unit (a team, or a requester without one) with the
    least virtual time; it advances by the slice's projects / the team's weight;
  - in the unit, the requester served longest ago; in the requester, the
    batch served longest ago (round robin); in the batch, in order: given
    back ranges first, then from the cursor.
  The slice is the batch's projectsPerJob (inspect-jobs.ts) while it is the
  only batch with work, else that divided by the batches with work, at least
  CONTENDED projects.

  KEYS[1] fair batches hash   KEYS[2] fair slices hash (slice id -> JSON)
  KEYS[3] fair virtual times  KEYS[4] team weights hash (team -> weight)
  KEYS[5] worker slots hash (worker -> '<slots>|<expires ms>')
  KEYS[6] fair contention generation  KEYS[7] fair counters hash (picks, turn)
  KEYS[8] fair holders hash (slice id -> worker running its job)

  ARGV[1] now (ms)  ARGV[2] CONTENDED  ARGV[3] AGING

  Returns {'full'}, {'empty'}, or {'slice', slice id, batch id, plugin id, start, count, generation}.
]]
local now = tonumber(ARGV[1])
local contended = tonumber(ARGV[2])
local aging = tonumber(ARGV[3])

local slots = 0
local live = {}
local workers = redis.call('HGETALL', KEYS[5])
for i = 1, #workers, 2 do
  local count, expires = string.match(workers[i + 1], '^(%d+)|(%d+)$')
  if count and tonumber(expires) > now then
    slots = slots + tonumber(count)
    live[workers[i]] = true
  else
    redis.call('HDEL', KEYS[5], workers[i])
  end
end
-- The slices out, read once: a check per holder would cost a command per slot on every pick.
local sliceIds = redis.call('HKEYS', KEYS[2])
local out = #sliceIds
local isOut = {}
for _, id in ipairs(sliceIds) do isOut[id] = true end
local holders = redis.call('HGETALL', KEYS[8])
local gone = {}
for i = 1, #holders, 2 do
  if not isOut[holders[i]] then
    gone[#gone + 1] = holders[i]
  elseif not live[holders[i + 1]] then
    out = out - 1
  end
end
if #gone > 0 then redis.call('HDEL', KEYS[8], unpack(gone)) end
if out >= slots + 1 then return {'full'} end

local active, ids = {}, {}
local all = redis.call('HGETALL', KEYS[1])
local lowest, highest
for i = 1, #all, 2 do
  local state = cjson.decode(all[i + 1])
  if state.c < state.n or #state.back > 0 then
    active[#active + 1] = state
    ids[#active] = all[i]
    if highest == nil or state.cls < highest then highest = state.cls end
    if lowest == nil or state.cls > lowest then lowest = state.cls end
  end
end
if #active == 0 then return {'empty'} end

local picks = redis.call('HINCRBY', KEYS[7], 'picks', 1)
local class = highest
if aging > 0 and picks % aging == 0 then class = lowest end

-- The unit with the least virtual time, then its requester and batch served longest ago.
local best, bestKey
local vtimes, turns = {}, {}
for index, state in ipairs(active) do
  if state.cls == class then
    local unitField = class .. '/' .. state.unit
    if vtimes[unitField] == nil then
      vtimes[unitField] = tonumber(redis.call('HGET', KEYS[3], unitField) or '0')
    end
    local requesterField = 'u:' .. unitField .. '/' .. state.r
    if turns[requesterField] == nil then
      turns[requesterField] = tonumber(redis.call('HGET', KEYS[3], requesterField) or '0')
    end
    local key = {vtimes[unitField], turns[requesterField], state.w, state.o or 0}
    local better = best == nil
    if not better then
      for k = 1, 4 do
        if key[k] ~= bestKey[k] then better = key[k] < bestKey[k]; break end
      end
    end
    if better then best, bestKey = index, key end
  end
end

local state = active[best]
local batchId = ids[best]
-- Alone, the batch's projectsPerJob; shared, that split by the batches with work (at least
-- CONTENDED): a small batch still goes one project a slice, two large ones alternate in
-- chunks, not in a hand-off per call. A batch entering later moves the generation, and
-- running slices give their rest back, so a chunk never makes a newcomer wait.
local perJob = math.max(1, math.min(100, math.floor(state.n / 24)))
local size = perJob
if #active > 1 then size = math.max(contended, math.floor(perJob / #active)) end
local start, count
if #state.back > 0 then
  local range = state.back[1]
  start = range[1]
  count = math.min(size, range[2])
  if count == range[2] then table.remove(state.back, 1) else state.back[1] = {range[1] + count, range[2] - count} end
else
  start = state.c
  count = math.min(size, state.n - state.c)
  state.c = state.c + count
end

local unitField = class .. '/' .. state.unit
local weight = 1
if string.sub(state.unit, 1, 5) == 'team:' then
  weight = tonumber(redis.call('HGET', KEYS[4], string.sub(state.unit, 6)) or '1') or 1
  if weight <= 0 then weight = 1 end
end
redis.call('HSET', KEYS[3], unitField, tostring(vtimes[unitField] + count / weight))
local turn = redis.call('HINCRBY', KEYS[7], 'turn', 1)
redis.call('HSET', KEYS[3], 'u:' .. unitField .. '/' .. state.r, turn)
state.w = turn
state.out = state.out + 1
state.s = state.s + 1
redis.call('HSET', KEYS[1], batchId, cjson.encode(state))
local generation = tonumber(redis.call('GET', KEYS[6]) or '0')
local sliceId = batchId .. '.' .. state.s
redis.call('HSET', KEYS[2], sliceId,
  cjson.encode({b = batchId, p = state.p, st = start, k = count, at = now, g = generation}))
return {'slice', sliceId, batchId, state.p, start, count, generation}
