-- The reference ingest's one round trip (bench/children/reference-ingest.ts): an event id seen for the first
-- time queues its body.
-- KEYS[1]: the event id's duplicate marker
-- KEYS[2]: the list the bodies go to
-- ARGV[1]: the event's body
-- returns: 1 when the event was new (queued), 0 for a duplicate
if redis.call('SET', KEYS[1], '1', 'EX', 172800, 'NX') then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  return 1
end
return 0
