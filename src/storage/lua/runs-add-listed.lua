-- Counts a listed page's records once: pages come in order from one lister, so a page at or below the last one
-- counted was counted already (a lister killed before saving its place lists it again).
--
-- KEYS[1] the run's hash
-- ARGV[1] page number
-- ARGV[2] its records
-- returns 'counted', or 'seen' when the page was counted before

if tonumber(redis.call('HGET', KEYS[1], 'listedPage') or -1) >= tonumber(ARGV[1]) then return 'seen' end
redis.call('HINCRBY', KEYS[1], 'recordsListed', ARGV[2])
redis.call('HSET', KEYS[1], 'listedPage', ARGV[1])
return 'counted'
