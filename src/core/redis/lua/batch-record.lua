--[[
  Records the outcomes of some projects of one batch, each once (a project
  that already has an outcome, or comes twice, is skipped): counts them,
  keeps what later reads need of each project's latest inspection (not when
  cancelled: a cancelled inspection says nothing new about the project), ends
  the batch when every project has an outcome, and publishes the progress once.
  Several outcomes cost about as many commands as one: one read of which are
  recorded, one write per hash, one increment per status, one publish.

  The outcome itself is stored once, in the batch's results. Of the latest
  inspection only a short entry is kept: when it succeeded, the plugin's
  fleet-facts entry (its facts, and its actions when it advertised any) is
  it, and the project's latest-inspection field is deleted; when it failed,
  the latest-inspection field holds its batch and time (the fleet entry
  keeps the last success). So a latest-inspection field, when there is one,
  is always newer than the fleet entry.

  KEYS[1] batch hash
  KEYS[2] batch results hash
  KEYS[3] latest-inspection hash (field '<plugin>/<project>': the latest inspection when it failed)
  KEYS[4] the plugin's fleet-facts hash (project -> its latest successful result's facts)
  KEYS[5] the plugin's fleet index (sorted set of the hash's project ids, each as its page-order key)
  KEYS[6] batch statuses hash (project -> its outcome's status: a results page reads these, not every result)

  ARGV[1] batch events channel
  ARGV[2] now (ISO time)
  ARGV[3] plugin id (the latest-inspection field is '<plugin>/<project>')
  then 6 per outcome:
    project id, outcome JSON, status ('succeeded', 'failed' or 'cancelled';
    also the counter's field), latest-inspection JSON (written when the
    status is 'failed'), fleet-facts JSON (written when it is 'succeeded'),
    the project id's page-order key in the fleet index

  Returns { how many were recorded, 1 when the batch has ended (every project has an outcome) else 0 }.
]]
local n = (#ARGV - 3) / 6
if n < 1 then return {0, 0} end
local ids = {}
for i = 1, n do ids[i] = ARGV[3 + (i - 1) * 6 + 1] end
local already = redis.call('HMGET', KEYS[2], unpack(ids))

local results, statuses, latest, fleet, indexed, superseded, recordedIds = {}, {}, {}, {}, {}, {}, {}
local counts = {succeeded = 0, failed = 0, cancelled = 0}
local taken = {}
local lastId, lastStatus
for i = 1, n do
  local base = 3 + (i - 1) * 6
  local id, status = ARGV[base + 1], ARGV[base + 3]
  if not already[i] and not taken[id] then
    taken[id] = true
    results[#results + 1] = id
    results[#results + 1] = ARGV[base + 2]
    statuses[#statuses + 1] = id
    statuses[#statuses + 1] = status
    counts[status] = (counts[status] or 0) + 1
    if status == 'failed' then
      latest[#latest + 1] = ARGV[3] .. '/' .. id
      latest[#latest + 1] = ARGV[base + 4]
    elseif status == 'succeeded' then
      fleet[#fleet + 1] = id
      fleet[#fleet + 1] = ARGV[base + 5]
      indexed[#indexed + 1] = 0
      indexed[#indexed + 1] = ARGV[base + 6]
      superseded[#superseded + 1] = ARGV[3] .. '/' .. id
    end
    recordedIds[#recordedIds + 1] = id
    lastId, lastStatus = id, status
  end
end
if #recordedIds == 0 then return {0, 0} end

redis.call('HSET', KEYS[2], unpack(results))
redis.call('HSET', KEYS[6], unpack(statuses))
for _, status in ipairs({'succeeded', 'failed', 'cancelled'}) do
  if counts[status] > 0 then redis.call('HINCRBY', KEYS[1], status, counts[status]) end
end
if #latest > 0 then redis.call('HSET', KEYS[3], unpack(latest)) end
if #fleet > 0 then
  -- The index holds every project of the hash: only a project new to the hash needs adding.
  if redis.call('HSET', KEYS[4], unpack(fleet)) > 0 then redis.call('ZADD', KEYS[5], unpack(indexed)) end
  redis.call('HDEL', KEYS[3], unpack(superseded))
end

local now = redis.call('HMGET', KEYS[1], 'total', 'succeeded', 'failed', 'cancelled', 'finishedAt')
local total = tonumber(now[1] or '0')
local succeeded = tonumber(now[2] or '0')
local failed = tonumber(now[3] or '0')
local cancelled = tonumber(now[4] or '0')
local finished = 0
if succeeded + failed + cancelled >= total then
  -- The time the batch ended stays the first one written.
  if not now[5] then redis.call('HSET', KEYS[1], 'finishedAt', ARGV[2]) end
  finished = 1
end
redis.call('PUBLISH', ARGV[1], cjson.encode({projectId = lastId, status = lastStatus,
  projectIds = recordedIds, succeeded = succeeded, failed = failed, cancelled = cancelled,
  total = total, finished = finished == 1}))
return {#recordedIds, finished}
