--[[
  Deletes a terminal operation older than the retention cut-off, with its
  idempotency key. A record that is not terminal is kept.

  KEYS[1] operation hash
  KEYS[2] operations-by-time sorted set
  KEYS[3] its idempotency key (keys.idempotency of the stored idempotencyKey),
          or any key when it has none

  ARGV[1] operation id
  ARGV[2] terminal states, comma-separated
  ARGV[3] the stored idempotencyKey KEYS[3] was built from ('' for none)

  Returns 1 when deleted, 0 when kept (also when the record's idempotencyKey
  is not ARGV[3]: the caller read another record than this one).
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state and not string.find(',' .. ARGV[2] .. ',', ',' .. state .. ',', 1, true) then return 0 end
local idempotencyKey = redis.call('HGET', KEYS[1], 'idempotencyKey') or ''
if idempotencyKey ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if idempotencyKey ~= '' then redis.call('DEL', KEYS[3]) end
return 1
