--[[
  A claimed project's operation exists: its id is kept with the project and
  indexed to the rollout, and the project moves from `starting` to `running`
  (unless it already ended: its operation can end before this runs).

  KEYS[1] the rollout's project states hash
  KEYS[2] the rollout's project → operation hash
  KEYS[3] the operation → rollout hash

  ARGV[1] project id
  ARGV[2] operation id
  ARGV[3] rollout id

  Returns 1 when the project was starting (now running), else 0.
]]
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
if redis.call('HGET', KEYS[1], ARGV[1]) == 'starting' then
  redis.call('HSET', KEYS[1], ARGV[1], 'running')
  return 1
end
return 0
