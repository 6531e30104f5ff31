--[[
  Moves an operation to a new state if its current state allows it, and
  publishes the new state on the operation's events channel. Terminal states
  never change because no caller lists them in ARGV[1].

  KEYS[1] operation hash

  ARGV[1] allowed current states, comma-separated
  ARGV[2] new state
  ARGV[3] '1': refuse when a cancel was requested
  ARGV[4] the operation's events channel
  ARGV[5..] field/value pairs written with the state

  Returns {outcome, previous state}: outcome is 'ok', 'missing', 'refused' or
  'cancel-requested'.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', ''} end
if not string.find(',' .. ARGV[1] .. ',', ',' .. state .. ',', 1, true) then return {'refused', state} end
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then
  return {'cancel-requested', state}
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], unpack(ARGV, 5))
redis.call('PUBLISH', ARGV[4], ARGV[2])
return {'ok', state}
