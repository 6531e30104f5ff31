--[[
  A slice's job ended (done, failed for good, or its rest was given back
  with ARGV[3..4]): its record goes; the batch leaves the fair queue once
  nothing of it is left to hand out and no slice of it is outstanding. A
  give-back puts the range at the front of its batch, unless the batch was
  cancelled (KEYS[3] has cancelledAt) or left the queue.

  KEYS[1] fair batches hash  KEYS[2] fair slices hash  KEYS[3] the batch's hash
  KEYS[4] fair holders hash
  ARGV[1] batch id  ARGV[2] slice id  ARGV[3] given back: start (or '')  ARGV[4] count

  Returns 1 when the record was there, else 0 (a repeat, or the batch was cancelled).
]]
redis.call('HDEL', KEYS[4], ARGV[2])
if redis.call('HDEL', KEYS[2], ARGV[2]) == 0 then return 0 end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 1 end
local state = cjson.decode(raw)
state.out = math.max(0, state.out - 1)
if ARGV[3] ~= '' and redis.call('HEXISTS', KEYS[3], 'cancelledAt') == 0 then
  table.insert(state.back, 1, {tonumber(ARGV[3]), tonumber(ARGV[4])})
end
if state.c >= state.n and #state.back == 0 and state.out == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(state))
end
return 1
