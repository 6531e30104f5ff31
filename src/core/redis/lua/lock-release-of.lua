--[[
  Releases a project lock held by this operation whatever its fencing token
  (left by a dead worker).

  KEYS[1] project lock

  ARGV[1] operation id

  Returns 1 when released, 0 otherwise.
]]
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then return redis.call('DEL', KEYS[1]) end
return 0
