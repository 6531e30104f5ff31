--[[
  A worker took an operate job whose turn is ARGV[1] (operation-turn.lua):
  the turn workers have reached moves up to it, never back.

  KEYS[1] operation turns hash
  ARGV[1] the job's turn (its BullMQ priority)

  Returns the turn reached.
]]
local served = tonumber(redis.call('HGET', KEYS[1], 'served') or '0')
local turn = tonumber(ARGV[1])
if turn > served then
  redis.call('HSET', KEYS[1], 'served', turn)
  return turn
end
return served
