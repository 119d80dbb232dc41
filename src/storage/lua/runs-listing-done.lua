-- Listing is complete: the run moves from listing to processing with its batch total. Only from listing: a
-- lister killed after the run ended finishes again, and must not put a done or stopped run back to work.
--
-- KEYS[1] the run's hash
-- ARGV[1] the batches enqueued in all
-- ARGV[2] the time (ms)
-- returns 'processing', or the state the run was left in when it was no longer listing

local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'listing' then return state or 'gone' end
redis.call('HSET', KEYS[1], 'batchesTotal', ARGV[1], 'state', 'processing', 'progressAt', ARGV[2])
return 'processing'
