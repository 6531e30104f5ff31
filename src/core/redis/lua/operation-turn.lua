--[[
  The BullMQ priority of a requester's new operation (lower runs first), so
  queued operations are served in turn between requesters: a requester's
  operations take consecutive numbers from max(its last + 1, the clock), and
  the clock is the number of the operation dispatched last
  (operation-turns 'clock', set by the worker), so a requester who arrives
  late goes next instead of behind everyone's queue. Near BullMQ's highest
  priority (2^21) every number restarts from 1 ('epoch' moves): operations
  queued before keep theirs and, for that one wrap, run after the new ones.

  KEYS[1] operation-turns hash
  ARGV[1] requester

  Returns the priority (1 .. 2,000,000).
]]
local clock = tonumber(redis.call('HGET', KEYS[1], 'clock') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], 'r:' .. ARGV[1]) or '0')
local turn = math.max(last + 1, clock + 1)
if turn > 2000000 then
  local fields = {}
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do fields[#fields + 1] = field end
  if #fields > 0 then redis.call('HDEL', KEYS[1], unpack(fields)) end
  redis.call('HINCRBY', KEYS[1], 'epoch', 1)
  turn = 1
end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[1], turn)
return turn
