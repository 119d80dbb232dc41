-- A full listing joined by one that also forgets records gone from the CRM takes that on, while it is still
-- listing: its lister forgets the unlisted records at the listing's end (it reads `scope` after the listing is
-- done too, so a widening just before the end is not lost). Once the listing is done it is too late.
--
-- KEYS[1] the run's hash
-- ARGV none
-- returns 'widened', or the state the run is in when it is no longer listing ('gone' when it is not there)

local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'listing' then return state or 'gone' end
redis.call('HSET', KEYS[1], 'scope', 'forget')
return 'widened'
