-- Sets the report sequence last written to each record (the first part of its packed state).
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] record states (linear-hash stem)
-- ARGV[1..] pairs of record id, seq (base 36; '' for none)
-- returns 'gone' when the installation is gone, else 'set'

-- @include linear-hash
-- @include record-state

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local R = lh_open(KEYS[2])
for i = 1, #ARGV, 2 do
  local old = lh_get(R, ARGV[i])
  local rest = old and rest_of(old) or ''
  if rest ~= '' then lh_set(R, ARGV[i], ARGV[i + 1] .. '|' .. rest) else lh_set(R, ARGV[i], ARGV[i + 1]) end
end
lh_close(R)
return 'set'
