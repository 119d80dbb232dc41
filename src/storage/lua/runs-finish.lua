-- Marks a run done with its summary and deletes its batches, only if it is still processing and has exactly
-- the batches the summary sums: of two workers finishing at once, the second writes nothing over the first's.
--
-- KEYS[1] the run's hash
-- KEYS[2] the run's batches (hash)
-- ARGV[1] the summary (JSON)
-- ARGV[2] how many batches it sums
-- ARGV[3] the time (ISO)
-- returns 'finished', or 'not_finished' when the run was not processing or its batches differ

if redis.call('HGET', KEYS[1], 'state') ~= 'processing' then return 'not_finished' end
if redis.call('HLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return 'not_finished' end
redis.call('HSET', KEYS[1], 'state', 'done', 'finishedAt', ARGV[3], 'summary', ARGV[1])
redis.call('UNLINK', KEYS[2])
return 'finished'
