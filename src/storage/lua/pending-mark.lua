-- Marks a slug for an installation's slug update, only while the installation exists: a batch still in flight
-- when its installation is removed leaves no marks behind after the removal deleted its keys.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the lane's marks (sorted set slug -> mark)
-- KEYS[3] the installation's mark counter
-- KEYS[4] when each marked slug's oldest unfinished change arrived (sorted set slug -> ms; absent from callers of older releases)
-- KEYS[5] the single changes' (urgent) lane's marks, given when marking in the hot lane: a slug gone hot leaves
--         it, and its pending update waits with the storm's (absent: no lane is left)
-- ARGV[1] the slug
-- ARGV[2] when this change arrived (ms; absent from callers of older releases)
-- returns the mark, or 'gone' when the installation is gone

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local n = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[2], n, ARGV[1])
if KEYS[5] then redis.call('ZREM', KEYS[5], ARGV[1]) end
if KEYS[4] and ARGV[2] then
  -- The oldest change still waiting counts: a later mark of the same slug keeps it.
  local since = redis.call('ZSCORE', KEYS[4], ARGV[1])
  if not since or tonumber(since) > tonumber(ARGV[2]) then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1]) end
end
return n
