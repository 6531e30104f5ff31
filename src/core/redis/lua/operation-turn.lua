--[[
  An operation's place among the queued ones (work/operations/operation-turns.ts):
  its BullMQ priority, so two requesters' operations alternate instead of
  leaving first come first served. Start-time fair queueing: a requester's
  next operation is due one turn after the later of its own previous one and
  the turn workers have reached (`served`), so a requester who queues many
  takes every other turn, and one who was idle gets no banked credit.
  Turns start again from 1 when nothing is queued (ARGV[2] = 0), which keeps
  them under BullMQ's priority limit.

  KEYS[1] operation turns hash ('served' -> the highest turn taken; 'r:<requester>' -> its last turn)
  ARGV[1] requester  ARGV[2] operate jobs queued now (waiting, prioritized, delayed)  ARGV[3] the limit

  Returns the turn (1 .. limit).
]]
if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) end
local served = tonumber(redis.call('HGET', KEYS[1], 'served') or '0')
local field = 'r:' .. ARGV[1]
local last = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local turn = math.min(math.max(served, last) + 1, tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], field, turn)
return turn
