--[[
  Moves an operation to a new state if its current state allows it, and
  publishes the new state on the operation's events channel. A terminal state
  never changes, whatever the caller allows.

  KEYS[1] operation hash

  ARGV[1] allowed current states, comma-separated
  ARGV[2] new state
  ARGV[3] '1': refuse when a cancel was requested
  ARGV[4] the operation's events channel
  ARGV[5] the message published on it (channel-messages.ts operationStateMessage)
  ARGV[6] terminal states, comma-separated
  ARGV[7..] field/value pairs written with the state

  Returns {outcome, previous state}: outcome is 'ok', 'missing', 'terminal',
  'refused' or 'cancel-requested'.
]]
local function listed(csv, value) return string.find(',' .. csv .. ',', ',' .. value .. ',', 1, true) ~= nil end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', ''} end
if listed(ARGV[6], state) then return {'terminal', state} end
if not listed(ARGV[1], state) then return {'refused', state} end
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then
  return {'cancel-requested', state}
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], unpack(ARGV, 7))
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {'ok', state}
