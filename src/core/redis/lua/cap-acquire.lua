--[[
  Admits one call of a plugin under its installation-wide caps
  (plugin-caps.ts), or says why it must wait. Time is Redis' own, so workers
  on several machines agree on it.

  KEYS[1] the plugin's cap holders: sorted set, call id → lease expiry (ms)
  KEYS[2] the plugin's recent calls: sorted set, call id → start (ms)

  ARGV[1] call id (unique per call)
  ARGV[2] most calls at once (0: no cap)
  ARGV[3] lease (ms): a holder that does not renew within it lost its slot
  ARGV[4] most calls per window (0: no cap)
  ARGV[5] window (ms)

  Returns {'ok', 0} when admitted (a holder with a lease, and one call
  counted in the window), else {'concurrency' | 'rate', ms until it may be
  worth asking again}.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local most = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
if most > 0 then
  -- A holder whose worker died (kill -9) stops renewing: its slot comes back when its lease ends.
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= most then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {'concurrency', tonumber(first[2]) - now}
  end
end
local rate = tonumber(ARGV[4])
if rate > 0 then
  local window = tonumber(ARGV[5])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  if redis.call('ZCARD', KEYS[2]) >= rate then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return {'rate', tonumber(oldest[2]) + window - now + 1}
  end
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], window)
end
if most > 0 then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease)
end
return {'ok', 0}
