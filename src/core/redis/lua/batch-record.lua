--[[
  Records one project's outcome in a batch, once (HSETNX): counts it, keeps it
  as the latest result of plugin x project (not when cancelled: a cancelled
  inspection says nothing new about the project) and, when it succeeded, its
  facts as the project's in the plugin's fleet view, ends the batch when every
  project has an outcome, and publishes the progress.

  KEYS[1] batch hash
  KEYS[2] batch results hash
  KEYS[3] latest-inspection hash
  KEYS[4] the plugin's fleet-facts hash (project -> its latest successful result's facts)
  KEYS[5] the plugin's fleet index (sorted set of the hash's project ids, each as its page-order key)

  ARGV[1] project id
  ARGV[2] outcome JSON
  ARGV[3] status ('succeeded', 'failed' or 'cancelled'; also the counter's field)
  ARGV[4] latest-inspection field ('<plugin>/<project>')
  ARGV[5] latest-inspection JSON
  ARGV[6] batch events channel
  ARGV[7] now (ISO time)
  ARGV[8] fleet-facts JSON (written when the status is 'succeeded')
  ARGV[9] the project id's page-order key in the fleet index

  Returns 1 when recorded, 0 when the project already had an outcome.
]]
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[3], 1)
if ARGV[3] ~= 'cancelled' then redis.call('HSET', KEYS[3], ARGV[4], ARGV[5]) end
if ARGV[3] == 'succeeded' then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[8])
  redis.call('ZADD', KEYS[5], 0, ARGV[9])
end
local function count(field) return tonumber(redis.call('HGET', KEYS[1], field) or '0') end
local total = count('total')
local finished = 0
if count('succeeded') + count('failed') + count('cancelled') >= total then
  redis.call('HSET', KEYS[1], 'finishedAt', ARGV[7])
  finished = 1
end
redis.call('PUBLISH', ARGV[6], cjson.encode({projectId = ARGV[1], status = ARGV[3],
  succeeded = count('succeeded'), failed = count('failed'), cancelled = count('cancelled'),
  total = total, finished = finished == 1}))
return 1
