-- Says whether the connector made a record's link itself. Part 5 of the state is '*' (and the place digest,
-- storage/record-state.ts `packAuto`) for an auto-link to the record's own slug, '=<slug>' for another slug. An
-- auto-link already there keeps its place digest.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] record states (linear-hash stem)
-- ARGV[1] record id
-- ARGV[2] stored slug of the auto-link, or '' to drop the auto-link and its place digest
-- returns 'gone' when the installation is gone, else 'set'

-- @include linear-hash
-- @include record-state

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local R = lh_open(KEYS[2])
local id, slug = ARGV[1], ARGV[2]
local old = lh_get(R, id)
local t = parts(old or '')
for i = #t + 1, 5 do t[i] = '' end
if slug == '' then
  t[5] = ''
  if not old then return 'set' end
elseif t[2] == slug then
  if string.sub(t[5], 1, 1) ~= '*' then t[5] = '*' end
else t[5] = '=' .. slug end
lh_set(R, id, join(t))
lh_close(R)
return 'set'
