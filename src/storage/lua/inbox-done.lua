-- A slug's fan-out is done: its draining entry goes, unless a newer event of it was taken meanwhile.
--
-- KEYS[1] draining (hash slug -> event id)
-- KEYS[2] draining marks' acceptance times (hash slug -> ms; absent on marks of older releases)
-- KEYS[3] draining marks' lanes (hash slug -> lane; absent from callers of older releases)
-- ARGV[1] the slug
-- ARGV[2] the event id the fan-out took
-- returns 'done', or 'newer' when a newer event is draining

if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  if KEYS[2] then redis.call('HDEL', KEYS[2], ARGV[1]) end
  if KEYS[3] then redis.call('HDEL', KEYS[3], ARGV[1]) end
  return 'done'
end
return 'newer'
