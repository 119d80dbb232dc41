-- Appends decisions to an installation's decision log and marks each record as touched by a person or an
-- admin at that entry, in one step: undo (of a run or of a mass action) leaves alone every record whose mark
-- is newer than what it undoes, so the mark must never lag the logged decision.
--
-- KEYS[1] the decision log (stream, trimmed to ARGV[1] entries)
-- KEYS[2] touch marks (hash record id -> the stream id of the record's latest decision)
-- ARGV[1] the most entries the stream keeps
-- ARGV[2..] record id / entry JSON pairs
-- returns the stream id of the last entry added

local last = ''
for i = 2, #ARGV, 2 do
  last = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'e', ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], last)
end
return last
