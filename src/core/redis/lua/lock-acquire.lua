--[[
  Takes a project's lock for one operation, with a fresh fencing token. The
  same operation may take it again (a retried job).

  KEYS[1] project lock
  KEYS[2] fencing counter

  ARGV[1] operation id
  ARGV[2] time to live (ms)

  Returns the lock value '<operation id>:<fencing token>', or nil when another
  operation holds the lock.
]]
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then return false end
local value = ARGV[1] .. ':' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return value
