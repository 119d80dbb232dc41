-- Stops a run. A run listing or processing is marked stopped with its summary and its batches deleted, only if
-- it has exactly the batches the summary sums; a stopped one gets the new reason; a done one stays.
--
-- KEYS[1] the run's hash
-- KEYS[2] the run's batches (hash)
-- ARGV[1] the summary (JSON)
-- ARGV[2] how many batches it sums (-1: stop without folding)
-- ARGV[3] the reason
-- ARGV[4] the time (ISO)
-- returns 'stopped_now' when the run was running; 'stopped' when it was stopped already (the new reason
--   kept); 'not_running' when the run is unknown or done; 'batches_changed' when a batch ended since the
--   summary was made (read again)

local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'done' then return 'not_running' end
if state == 'stopped' then
  redis.call('HSET', KEYS[1], 'stoppedReason', ARGV[3], 'finishedAt', ARGV[4])
  return 'stopped'
end
local count = tonumber(ARGV[2])
if count < 0 then
  redis.call('HSET', KEYS[1], 'state', 'stopped', 'stoppedReason', ARGV[3], 'finishedAt', ARGV[4])
  return 'stopped_now'
end
if redis.call('HLEN', KEYS[2]) ~= count then return 'batches_changed' end
redis.call('HSET', KEYS[1], 'state', 'stopped', 'stoppedReason', ARGV[3], 'finishedAt', ARGV[4], 'summary', ARGV[1])
redis.call('UNLINK', KEYS[2])
return 'stopped_now'
