--[[
  Creates an operation record, or returns the one that holds its idempotency key.

  KEYS[1] operation hash
  KEYS[2] idempotency key (unused when ARGV[1] is '0')
  KEYS[3] operations-by-time sorted set

  ARGV[1] '1' when an idempotency key is given, else '0'
  ARGV[2] idempotency key TTL (seconds)
  ARGV[3] requested-at (ms, the sorted-set score)
  ARGV[4] operation id
  ARGV[5] request hash (stored with the key: same key, other request = conflict)
  ARGV[6..] field/value pairs of the record

  Returns {1, id} when created; {0, id, requestHash} when the key already names
  an operation (requestHash '' for a key stored before hashes were kept).
]]
if ARGV[1] == '1' then
  local existing = redis.call('GET', KEYS[2])
  if existing then
    local separator = string.find(existing, ' ', 1, true)
    if separator then
      return {0, string.sub(existing, 1, separator - 1), string.sub(existing, separator + 1)}
    end
    return {0, existing, ''}
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
if ARGV[1] == '1' then redis.call('SET', KEYS[2], ARGV[4] .. ' ' .. ARGV[5], 'EX', ARGV[2]) end
return {1, ARGV[4]}
