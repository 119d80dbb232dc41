-- Records where an installation's changes come from, as its change stream says (app/change-streams.ts), only
-- while the caller holds the stream's lease: a holder that lost it must not overwrite what the new holder
-- said. Giving the lease back in the same step (ARGV[6] '1') leaves no moment where a reader sees the lease
-- held beside the state of a stream that has ended. `since` moves only when the mode changes: it says since
-- when the changes have come this way. A removed installation's state is not written again (its keys went
-- with it).
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the stream state hash
-- KEYS[3] the stream's lease
-- ARGV[1] the holder's token
-- ARGV[2] mode: 'stream' or 'poll'
-- ARGV[3] detail, for people
-- ARGV[4] reason code ('' for none)
-- ARGV[5] now (ms)
-- ARGV[6] '1' to give the lease back, '0' to keep it
-- returns 'set', 'gone' when the installation is gone, 'lost' when the lease is not the caller's

if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 'lost' end
if ARGV[6] == '1' then redis.call('DEL', KEYS[3]) end
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if redis.call('HGET', KEYS[2], 'mode') ~= ARGV[2] then redis.call('HSET', KEYS[2], 'since', ARGV[5]) end
redis.call('HSET', KEYS[2], 'mode', ARGV[2], 'detail', ARGV[3], 'updated', ARGV[5])
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[2], 'reason')
else
  redis.call('HSET', KEYS[2], 'reason', ARGV[4])
end
return 'set'
