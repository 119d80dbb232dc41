-- Marks a slug for an installation's slug update, only while the installation exists: a batch still in flight
-- when its installation is removed leaves no marks behind after the removal deleted its keys.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the lane's marks (sorted set slug -> mark)
-- KEYS[3] the installation's mark counter
-- ARGV[1] the slug
-- returns the mark, or 'gone' when the installation is gone

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local n = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[2], n, ARGV[1])
return n
