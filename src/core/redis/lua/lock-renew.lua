--[[
  Extends a project lock if it still holds this value.

  KEYS[1] project lock

  ARGV[1] lock value
  ARGV[2] time to live (ms)

  Returns 1 when renewed, 0 when the lock was lost.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
