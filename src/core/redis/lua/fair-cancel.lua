--[[
  A cancelled batch leaves the fair queue: nothing more of it is handed out,
  and its slice records go (their jobs are removed by the caller; a running
  one ends at its next call, seeing the cancel mark).

  KEYS[1] fair batches hash  KEYS[2] fair slices hash  KEYS[3] fair holders hash
  ARGV[1] batch id

  Returns the ids of the batch's slices that were outstanding.
]]
redis.call('HDEL', KEYS[1], ARGV[1])
local prefix = ARGV[1] .. '.'
local gone = {}
for _, id in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(id, 1, #prefix) == prefix then gone[#gone + 1] = id end
end
if #gone > 0 then
  redis.call('HDEL', KEYS[2], unpack(gone))
  redis.call('HDEL', KEYS[3], unpack(gone))
end
return gone
