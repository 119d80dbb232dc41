-- Writes fields of one of an installation's hashes (rejected slugs, the poll cursor) only while the
-- installation exists: a job still running when its installation is removed leaves nothing behind.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the hash written
-- ARGV[1..] field / value pairs
-- returns 'gone' when the installation is gone, else 'set'

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
redis.call('HSET', KEYS[2], unpack(ARGV))
return 'set'
