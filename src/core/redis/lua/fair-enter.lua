--[[
  A batch enters the fair queue (docs/adr/0010-fair-share-inspections.md):
  its state is kept in the fair batches hash until every project was handed
  out and every slice ended. A unit (team, or a requester without one) that
  had nothing waiting in the batch's class starts at the least virtual time
  of the class's waiting units (0 when none waits): idle time is never banked
  as credit, and what it used before is no debt either (the others' times
  start from 0 again whenever the class empties, so an old time kept would
  put it behind a busy unit by all it ran in earlier busy periods). When
  another batch was waiting, the contention generation moves: workers
  running a large slice see it on their next call and give the rest back.

  KEYS[1] fair batches hash (batch id -> state JSON)
  KEYS[2] fair virtual times hash ('<class>/<unit>' -> virtual time; 'u:<class>/<unit>/<requester>' -> last turn)
  KEYS[3] fair contention generation (a counter)

  ARGV[1] batch id
  ARGV[2] state JSON {p = plugin, n = total, cls = 0 high | 1 normal | 2 low, unit, r = requester}

  Returns how many other batches had work waiting.
]]
local state = cjson.decode(ARGV[2])
state.c = 0
state.back = {}
state.out = 0
state.s = 0
state.w = 0
local others, sameUnit = 0, false
local least
for _, raw in ipairs(redis.call('HVALS', KEYS[1])) do
  local other = cjson.decode(raw)
  if other.c < other.n or #other.back > 0 then
    others = others + 1
    if other.cls == state.cls then
      if other.unit == state.unit then sameUnit = true end
      local v = tonumber(redis.call('HGET', KEYS[2], other.cls .. '/' .. other.unit) or '0')
      if least == nil or v < least then least = v end
    end
  end
end
local field = state.cls .. '/' .. state.unit
if not sameUnit then
  redis.call('HSET', KEYS[2], field, tostring(least or 0))
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(state))
if others > 0 then redis.call('INCR', KEYS[3]) end
return others
