--[[
  The at-most-once mark: set durably before project.operate is written to the
  plugin, only while the operation runs, is not cancelled, was not dispatched
  yet and this worker still holds the project lock
  (docs/adr/0001-at-most-once-dispatch-mark.md).

  KEYS[1] operation hash
  KEYS[2] project lock

  ARGV[1] the lock value (fencing token) this worker holds
  ARGV[2] now (ISO time)
  ARGV[3] worker identity

  Returns 'ok', 'not-running', 'cancel-requested', 'already-dispatched' or
  'lock-not-held' (scripts.ts DispatchOutcome).
]]
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 'not-running' end
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 'cancel-requested' end
if redis.call('HGET', KEYS[1], 'dispatched') == '1' then return 'already-dispatched' end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'lock-not-held' end
redis.call('HSET', KEYS[1], 'dispatched', '1', 'dispatchedAt', ARGV[2], 'dispatchedBy', ARGV[3])
return 'ok'
