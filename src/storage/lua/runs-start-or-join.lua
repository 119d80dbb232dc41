-- Starts a run on an installation's lane, or joins the run under way there: one pass at a time per
-- installation (storage/active-runs.ts). A request that asks for more than the running run does (a full sync
-- during an incremental or reconcile run) supersedes it: the lane then points to the new run. Two full listings
-- cover the same ground: a wider one (one that also forgets records gone from the CRM) joins a listing under
-- way and takes the lane's rank up to its own; the caller widens the run itself (runs-widen.lua).
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the installation's active runs (hash, per lane: `<lane>:seen` once the lane was ever written, and
--   while a run is under way `<lane>`, `<lane>:kind`, `<lane>:rank`)
-- ARGV[1] the lane ('sync' or 'preview')
-- ARGV[2] the new run's id
-- ARGV[3] the new run's kind
-- ARGV[4] the new run's rank (what it covers: a higher rank supersedes a lower one)
-- ARGV[5] a run from before the lanes to adopt when the lane was never written ('' for none)
-- ARGV[6] its kind
-- ARGV[7] its rank
-- ARGV[8] a run found ended or dead, not to be joined ('' for none)
-- ARGV[9] '1' to supersede the lane's run whatever its rank (what it did so far was done under settings that
--   changed), else '0'
-- ARGV[10] the least rank of a full listing: a request and a run both at or above it join (absent in calls
--   from before: a higher rank supersedes)
-- returns {'started', id}; {'joined', id, kind}; {'joined', id, kind, 'widened'} when the request covers more
--   than the run it joined; {'superseded', id, old id}; {'gone'} when the installation is gone

if redis.call('EXISTS', KEYS[1]) == 0 then return {'gone'} end
local lane = ARGV[1]
if redis.call('HEXISTS', KEYS[2], lane .. ':seen') == 0 then
  redis.call('HSET', KEYS[2], lane .. ':seen', '1')
  if ARGV[5] ~= '' then
    redis.call('HSET', KEYS[2], lane, ARGV[5], lane .. ':kind', ARGV[6], lane .. ':rank', ARGV[7])
  end
end
local current = redis.call('HGET', KEYS[2], lane)
if current and current ~= ARGV[8] then
  local rank = tonumber(redis.call('HGET', KEYS[2], lane .. ':rank') or '0')
  local asked = tonumber(ARGV[4])
  local kind = redis.call('HGET', KEYS[2], lane .. ':kind') or ''
  if ARGV[9] ~= '1' and asked <= rank then return {'joined', current, kind} end
  local listing = tonumber(ARGV[10] or '0')
  if ARGV[9] ~= '1' and listing > 0 and rank >= listing and asked >= listing then
    redis.call('HSET', KEYS[2], lane .. ':rank', asked)
    return {'joined', current, kind, 'widened'}
  end
  redis.call('HSET', KEYS[2], lane, ARGV[2], lane .. ':kind', ARGV[3], lane .. ':rank', ARGV[4])
  return {'superseded', ARGV[2], current}
end
redis.call('HSET', KEYS[2], lane, ARGV[2], lane .. ':kind', ARGV[3], lane .. ':rank', ARGV[4])
return {'started', ARGV[2]}
