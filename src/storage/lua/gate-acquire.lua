-- Admits one request through a rate gate (ratelimit/redis-gate.ts): a GCRA on the gate's arrival time, held
-- back by a pause, at the rate an adaptive gate learns (lib/learnt-rate.lua), evenly spaced. Urgent callers
-- that must wait set a mark; hot and deferrable callers admit nothing while it is set, so the next slot goes to
-- the urgent caller however many others ask (a single change may take the whole rate). Hot callers (a storm's
-- coalesced re-reads) that must wait set a mark of their own, which deferrable callers yield to as well: a
-- storm's re-reads never wait behind a backfill, and a single change never waits behind a storm's re-reads.
--
-- KEYS[1] the arrival time (tat)
-- KEYS[2] the pause
-- KEYS[3] the learnt rate (hash)
-- KEYS[4] the urgent callers' waiting mark (absent in calls from before it existed)
-- KEYS[5] the hot callers' waiting mark (absent in calls from before it existed)
-- KEYS[6] the deferrable lane's own pause, set while a CRM's window is nearly spent (absent before it existed)
-- ARGV[1] the ceiling's interval (ms)
-- ARGV[2] the window (ms)
-- ARGV[3] the reserve share
-- ARGV[4] '1' for an adaptive gate
-- ARGV[5] an adaptive gate's start rate (a second)
-- ARGV[6] its floor (a second)
-- ARGV[7] how long the learnt rate is kept after its last use (ms)
-- ARGV[8] '1' for a deferrable caller (yields to both marks), '2' for a hot one (yields to the urgent mark,
--         sets the hot mark), '0' or absent for an urgent one (sets the urgent mark)
-- ARGV[9] how long past the caller's wait its mark lasts (ms): longer than the caller takes to ask again
-- ARGV[10] '1' when the caller was told to wait before (its mark is dropped once it is admitted; absent before)
-- ARGV[11] its doubling time before the first 429 (ms; lib/learnt-rate.lua)
-- ARGV[12] its recovery time after a cut (ms)
-- ARGV[13] its cut factor
-- ARGV[14] its limit margin
-- ARGV[15] its probe time (ms)
-- ARGV[16] its probe share
-- returns {ms to wait, 0}, or {0, the time admitted (ms)}

-- @include redis-clock
-- @include learnt-rate

local urgentMark = KEYS[4]
local hotMark = KEYS[5]
local deferrable = ARGV[8] == '1'
local hot = ARGV[8] == '2'
-- The mark this caller sets while it waits; it holds the lanes below back until the caller asks again.
local ownMark = nil
if hot then ownMark = hotMark elseif not deferrable then ownMark = urgentMark end
local function waitFor(ms)
  if ownMark then
    local ttl = math.ceil(math.min(ms, 1000) + tonumber(ARGV[9] or 100))
    if redis.call('PTTL', ownMark) < ttl then redis.call('SET', ownMark, '1', 'PX', ttl) end
  end
  return {ms, 0}
end

local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return waitFor(pause) end
if urgentMark and (deferrable or hot) then
  local held = redis.call('PTTL', urgentMark)
  if held > 0 then return waitFor(held) end
end
if hotMark and deferrable then
  local held = redis.call('PTTL', hotMark)
  if held > 0 then return {held, 0} end
end
if KEYS[6] and deferrable then
  local held = redis.call('PTTL', KEYS[6])
  if held > 0 then return {held, 0} end
end
local now = now_ms()
local ceilIv = tonumber(ARGV[1])
local interval = ceilIv
local window = tonumber(ARGV[2])
local learnt = nil
if ARGV[4] == '1' then
  local p = learnt_params(ceilIv, ARGV[5], ARGV[6], ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16])
  learnt = read_learnt(KEYS[3])
  if init_learnt(learnt, now, p) then
    redis.call('HSET', KEYS[3], 'ss', 1, 'k0', now, 'r0', learnt.r0, 'mr', 0, 'mb', now, 'mc', 0, 'at', now,
      'iv', 1000 / learnt.r0, 'tol', 1000 / learnt.r0)
  end
  -- Evenly spaced: a burst is a rate the key has not shown it accepts.
  interval = 1000 / learnt_rate(learnt, now, p)
  window = interval
end
-- The reserve is a share of the burst: with no burst (evenly spaced) there is nothing to keep back, and a
-- reserve of a whole interval or more would never let the deferrable lane through.
local reserve = (window - interval) * tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
-- A burst that shrank (or a pause that ended early) leaves no debt beyond one window; stored, or a caller
-- would be told to wait one interval again and again.
if tat > now + window then
  tat = now + window
  redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(window + interval))
end
local nextTat = tat + interval
local allowAt = nextTat - window + reserve
if allowAt > now then return waitFor(math.ceil(allowAt - now)) end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(window + interval))
if learnt then
  if count_sent(learnt, now) then
    redis.call('HSET', KEYS[3], 'mr', learnt.mr, 'mb', learnt.mb, 'mc', 0, 'pb', learnt.pb, 'pc', learnt.pc,
      'hi', learnt.hi, 'iv', interval, 'tol', interval)
  else
    redis.call('HSET', KEYS[3], 'mc', learnt.mc)
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
-- The mark outlives the wait by a margin: dropped now, the lanes below get the next slots at once unless another
-- caller of this lane still waits (it sets the mark again when it asks, at most one slot later).
if ownMark and ARGV[10] == '1' then redis.call('DEL', ownMark) end
return {0, now}
