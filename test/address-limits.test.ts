import { describe, expect, it } from 'vitest';
import { AddressWindow, countAnswer, refusalWait } from '../src/server/address-limits.js';

/**
 * The webhook routes' refusal rule, which the Express limiter and the direct path both apply (the whole
 * server's answers: admin-hardening.test.ts and webhook-fast-path.test.ts).
 */

describe('the refusal rule', () => {
  it('only refused answers (401) count, and an address is refused once its window holds max of them', () => {
    let now = 0;
    const window = new AddressWindow(2, 60_000, 10, () => now);
    for (const status of [200, 202, 400, 413, 429, 500, 503]) countAnswer(window, 'a', status);
    expect(refusalWait(window, 'a')).toBeNull();
    countAnswer(window, 'a', 401);
    expect(refusalWait(window, 'a')).toBeNull();
    countAnswer(window, 'a', 401);
    expect(refusalWait(window, 'a')).toBe(60);
    expect(refusalWait(window, 'b')).toBeNull();
    now = 45_500;
    expect(refusalWait(window, 'a')).toBe(15);
    now = 60_000;
    expect(refusalWait(window, 'a')).toBeNull();
  });
});
