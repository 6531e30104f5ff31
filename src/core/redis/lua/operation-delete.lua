--[[
  Deletes a terminal operation older than the retention cut-off, with its
  idempotency key. A record that is not terminal is kept.

  KEYS[1] operation hash
  KEYS[2] operations-by-time sorted set

  ARGV[1] operation id
  ARGV[2] terminal states, comma-separated
  ARGV[3] idempotency key prefix (the key is this + the stored idempotencyKey)

  Returns 1 when deleted, 0 when kept.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state and not string.find(',' .. ARGV[2] .. ',', ',' .. state .. ',', 1, true) then return 0 end
local idempotencyKey = redis.call('HGET', KEYS[1], 'idempotencyKey')
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if idempotencyKey then redis.call('DEL', ARGV[3] .. idempotencyKey) end
return 1
