--[[
  Extends a running call's lease on its plugin's concurrency cap
  (plugin-caps.ts), by Redis' clock.

  KEYS[1] the plugin's cap holders: sorted set, call id → lease expiry (ms)

  ARGV[1] call id
  ARGV[2] lease (ms)

  Returns 1 when renewed, 0 when the call no longer holds a slot (its lease ended).
]]
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
