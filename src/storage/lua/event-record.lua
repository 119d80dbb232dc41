-- Records an inbound event once: its duplicate mark and its line in the event log in one step.
--
-- KEYS[1] the event's duplicate mark
-- KEYS[2] the event log (list)
-- ARGV[1] seconds the mark lasts
-- ARGV[2] the log line (JSON)
-- ARGV[3] the log's length
-- returns 'recorded', or 'duplicate' when the mark was there

-- @include event-log

if not log_event_once(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]) then return 'duplicate' end
return 'recorded'
