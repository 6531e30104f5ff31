--[[
  Cancels an operation: a queued one ends at once (its new state published on
  its events channel); a running one is marked and its id announced so the
  worker holding it kills its call.

  KEYS[1] operation hash

  ARGV[1] now (ISO time)
  ARGV[2] cancel channel
  ARGV[3] terminal states, comma-separated
  ARGV[4] the operation's events channel
  ARGV[5] the error code a queued operation ends with (ERROR_CODES.CANCELLED)
  ARGV[6] its error message
  ARGV[7] the message for the cancel channel: the operation's id (channel-messages.ts operationCancelMessage)
  ARGV[8] the message for the events channel: the state 'cancelled' (operationStateMessage)
  ARGV[9] who asked (the audit actor): kept as cancelledBy, the first asker only

  Returns {outcome, state before}: outcome is 'missing', 'terminal', 'cancelled'
  or 'requested'.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', ''} end
if string.find(',' .. ARGV[3] .. ',', ',' .. state .. ',', 1, true) then return {'terminal', state} end
redis.call('HSETNX', KEYS[1], 'cancelledBy', ARGV[9])
if state == 'queued' then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finishedAt', ARGV[1], 'errorCode', ARGV[5],
    'errorMessage', ARGV[6])
  redis.call('PUBLISH', ARGV[4], ARGV[8])
  return {'cancelled', state}
end
redis.call('HSET', KEYS[1], 'cancelRequested', '1')
redis.call('PUBLISH', ARGV[2], ARGV[7])
return {'requested', state}
