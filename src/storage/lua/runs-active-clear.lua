-- Takes an ended run off its installation's lane, only if the lane still points to it (a run that superseded
-- it, or a later one, stays).
--
-- KEYS[1] the installation's active runs (hash, see runs-start-or-join.lua)
-- ARGV[1] the run's id
-- returns 'cleared', or 'not_active' when no lane points to it

local cleared = 'not_active'
for _, lane in ipairs({'sync', 'preview'}) do
  if redis.call('HGET', KEYS[1], lane) == ARGV[1] then
    redis.call('HDEL', KEYS[1], lane, lane .. ':kind', lane .. ':rank')
    cleared = 'cleared'
  end
end
return cleared
