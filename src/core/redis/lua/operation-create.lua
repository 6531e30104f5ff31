--[[
  Creates an operation record, or returns the one that holds its idempotency key.

  KEYS[1] operation hash
  KEYS[2] idempotency key (unused when ARGV[1] is '0')
  KEYS[3] operations-by-time sorted set

  ARGV[1] '1' when an idempotency key is given, else '0'
  ARGV[2] idempotency key TTL (seconds)
  ARGV[3] requested-at (ms, the sorted-set score)
  ARGV[4] operation id
  ARGV[5..] field/value pairs of the record

  Returns {1, id} when created; {0, id of the operation holding the key} when not.
]]
if ARGV[1] == '1' then
  local existing = redis.call('GET', KEYS[2])
  if existing then return {0, existing} end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
if ARGV[1] == '1' then redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[2]) end
return {1, ARGV[4]}
