--[[
  Releases a project lock if it still holds this value.

  KEYS[1] project lock

  ARGV[1] lock value

  Returns 1 when released, 0 otherwise.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
