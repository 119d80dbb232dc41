-- The rate an adaptive gate (ratelimit/redis-gate.ts) allows now, in requests a second, from what the gate
-- keeps in its rate hash. Shared by gate-acquire.lua (pacing) and gate-refused.lua (a 429's cut):
--
-- - before any 429 (`ss`, slow start) the rate starts at a safe rate (`r0`) and doubles every `doublingMs`;
-- - a 429 takes `margin` of the rate it came at as the key's limit (`wmax`) and cuts to `cut` of it; the rate
--   then climbs back to the limit in `recoverMs`, flattening as it nears it, holds there, and past `recoverMs`
--   probes above it, slowly at first (`probeShare` more after `probeMs`) and faster the longer no 429 comes
--   (a cubic curve, as TCP CUBIC and the AWS SDKs' adaptive retry mode do);
-- - never more than twice the rate measured sent (`mr`, smoothed over half-second buckets), the start rate, the
--   highest rate measured since the slow start or the last cut (`hi`: the key took it) or the limit a 429
--   showed, whichever is highest: a rate the key has not shown it accepts is never sent at once, after an idle
--   spell too;
-- - a quota the service stated (`hint`, ms between requests) is the rate as it stands;
-- - never above the operator's ceiling (`ceil`), never below `floor`.
--
-- The hash: iv (ms between requests in force, kept for readers: status pages, the code before the learner),
-- tol (the burst in ms: no burst, iv), at (the last change), cut (the last cut), hint and hwin (a stated
-- quota), ss, r0, k0 (the slow start or the last cut's time), wmax (requests a second), mr, mb, mc (the rate
-- measured sent, its bucket's start and count), pb, pc (the bucket before: its start and count), hi (the
-- highest measured since the slow start or the last cut).

local LEARNT_FIELDS = {
  'iv', 'tol', 'at', 'hint', 'wmax', 'k0', 'ss', 'r0', 'mr', 'mb', 'mc', 'pb', 'pc', 'hi', 'cut',
}

local function read_learnt(key)
  local values = redis.call('HMGET', key, unpack(LEARNT_FIELDS))
  local st = {}
  for i, name in ipairs(LEARNT_FIELDS) do
    if values[i] then st[name] = tonumber(values[i]) end
  end
  return st
end

-- The learner's parameters, as the scripts take them (strings or numbers).
local function learnt_params(ceilIv, start, floor, doublingMs, recoverMs, cut, margin, probeMs, probeShare)
  return {
    ceil = 1000 / ceilIv,
    start = tonumber(start),
    floor = tonumber(floor),
    doublingMs = tonumber(doublingMs),
    recoverMs = tonumber(recoverMs),
    cut = tonumber(cut),
    margin = tonumber(margin),
    probeMs = tonumber(probeMs),
    probeShare = tonumber(probeShare),
  }
end

-- A state never kept (a fresh key) starts its slow start now; one the code before the learner kept starts it
-- from the rate that code had in force. Returns true when it filled the state in (to be written).
local function init_learnt(st, now, p)
  if st.k0 then return false end
  st.ss = 1
  st.k0 = now
  st.r0 = math.min(p.start, p.ceil)
  if st.iv and not st.hint then st.r0 = math.max(p.floor, math.min(p.ceil, 1000 / st.iv)) end
  st.mr = 0
  st.mb = now
  st.mc = 0
  return true
end

local function learnt_rate(st, now, p)
  local rate
  if st.hint then
    rate = 1000 / st.hint
  else
    local t = math.max(0, now - st.k0)
    if st.ss or not st.wmax then
      rate = st.r0 * 2 ^ math.min(64, t / p.doublingMs)
    elseif t < p.recoverMs then
      local x = 1 - t / p.recoverMs
      rate = st.wmax * (1 - (1 - p.cut) * x * x * x)
    else
      local x = (t - p.recoverMs) / p.probeMs
      rate = st.wmax * (1 + p.probeShare * x * x * x)
    end
    local shown = math.max(st.hi or 0, (not st.ss and st.wmax) or 0)
    rate = math.min(rate, math.max(st.r0 or p.start, 2 * (st.mr or 0), shown))
  end
  return math.max(math.min(p.floor, p.ceil), math.min(p.ceil, rate))
end

-- Counts one request sent into the measured rate; true when its half-second bucket rolled over.
local function count_sent(st, now)
  st.mc = (st.mc or 0) + 1
  local span = now - (st.mb or now)
  if span < 500 then return false end
  st.mr = 0.8 * (st.mc * 1000 / span) + 0.2 * (st.mr or 0)
  st.hi = math.max(st.hi or 0, st.mr)
  st.pb = st.mb or now
  st.pc = st.mc
  st.mb = now
  st.mc = 0
  return true
end

-- The rate sent over the last second or so (this bucket and the one before), as a service with one-second
-- windows counts it; nil when not known yet.
local function sent_lately(st, now)
  if not st.pb then return nil end
  local span = now - st.pb
  if span < 500 then return nil end
  return ((st.pc or 0) + (st.mc or 0)) * 1000 / span
end
