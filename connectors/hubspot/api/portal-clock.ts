/**
 * HubSpot resets a portal's daily API limit at midnight in the portal's own time zone (account details
 * `timeZone`, an IANA name such as `US/Eastern`), not at UTC midnight. These helpers find that midnight with
 * the platform's time-zone data (Intl), daylight-saving changes included.
 */

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A time zone Intl knows, or undefined. */
export function validTimeZone(timeZone: string | undefined): string | undefined {
  if (!timeZone) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}

/** Minutes the zone's wall clock is ahead of UTC at `at`. */
function offsetMinutes(timeZone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((wall - (at - (at % 1000))) / MINUTE);
}

/**
 * Milliseconds from `now` to the next midnight in `timeZone` (UTC when the zone is missing or unknown). Always
 * more than 0: at exactly midnight the answer is the following one.
 */
export function msUntilNextMidnightIn(timeZone: string | undefined, now: number): number {
  const zone = validTimeZone(timeZone) ?? 'UTC';
  const offset = offsetMinutes(zone, now) * MINUTE;
  const wall = now + offset;
  // The next wall-clock midnight, read with today's offset; corrected below when the offset changes overnight.
  const nextWallMidnight = Math.floor(wall / DAY) * DAY + DAY;
  let candidate = nextWallMidnight - offset;
  const later = offsetMinutes(zone, candidate) * MINUTE;
  if (later !== offset) candidate = nextWallMidnight - later;
  return Math.max(1, candidate - now);
}
