-- Keeps the auto-links a run made (for undo), only while the installation exists: a batch still in flight when
-- its installation is removed leaves no links behind after the removal deleted its keys.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the run's links (hash record id -> slug)
-- ARGV[1] seconds to keep them
-- ARGV[2..] record id / slug pairs
-- returns 'gone' when the installation is gone, else 'added'

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 'added'
