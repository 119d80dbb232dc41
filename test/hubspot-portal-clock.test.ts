import { describe, expect, it } from 'vitest';
import { msUntilNextMidnightIn, validTimeZone } from '../connectors/hubspot/api/portal-clock.js';

const HOUR = 3600_000;

describe('midnight in the portal time zone (HubSpot resets daily limits then)', () => {
  it('counts to the next local midnight, not UTC midnight', () => {
    const noonUtc = Date.UTC(2026, 10, 21, 12, 0, 0);
    expect(msUntilNextMidnightIn('UTC', noonUtc)).toBe(12 * HOUR);
    expect(msUntilNextMidnightIn('US/Eastern', noonUtc)).toBe(17 * HOUR);
    expect(msUntilNextMidnightIn('Asia/Kolkata', noonUtc)).toBe(6.5 * HOUR);
  });

  it('follows daylight-saving changes overnight', () => {
    // 2026-03-08 is the spring-forward day in New York: 05:00 UTC on the 8th is 00:00 EST, and the next
    // midnight (EDT) is 04:00 UTC on the 9th, 23 hours later.
    expect(msUntilNextMidnightIn('America/New_York', Date.UTC(2026, 2, 8, 5, 0, 0))).toBe(23 * HOUR);
  });

  it('falls back to UTC for a missing or unknown zone', () => {
    const t = Date.UTC(2026, 10, 21, 18, 0, 0);
    expect(msUntilNextMidnightIn(undefined, t)).toBe(6 * HOUR);
    expect(msUntilNextMidnightIn('Mars/Olympus', t)).toBe(6 * HOUR);
    expect(validTimeZone('Mars/Olympus')).toBeUndefined();
    expect(validTimeZone('US/Eastern')).toBe('US/Eastern');
  });
});
