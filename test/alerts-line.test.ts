import { describe, expect, it } from 'vitest';
import { ALERT_LINE_MAX, alertFromEvent, alertLine } from '../src/alerts/alert-event.js';

describe('the readable alert line', () => {
  it('puts severity and kind as words, then title and message, on one line', () => {
    expect(
      alertLine('alert.fired', {
        slug: 'x',
        kind: 'score_drop',
        title: 'Score fell',
        message: 'The overall score dropped 12 points',
        severity: 'high',
      }),
    ).toBe('High alert, score drop: Score fell — The overall score dropped 12 points');
  });

  it('reads the fields inside data.alert too, and a bare string alert as the kind', () => {
    expect(alertLine('alert.fired', { alert: { kind: 'risk', message: 'New risk' }, severity: 2 })).toBe(
      'Severity 2 alert, risk: New risk',
    );
    expect(alertLine('alert.fired', { slug: 'x', alert: 'score_drop' })).toBe('Score drop');
    // No raw code is shown: the service's codes read as words.
    expect(
      alertLine('alert.fired', { kind: 'LIQUIDITY-RISK', title: 'Cash low', severity: 'CRITICAL' }),
    ).toBe('Critical alert, liquidity risk: Cash low');
  });

  it('falls back to the event type when the payload carries nothing readable', () => {
    for (const data of [undefined, null, 'text', [1, 2], {}, { slug: 'x' }, { title: { nested: true } }]) {
      expect(alertLine('alert.fired', data), JSON.stringify(data)).toBe('alert.fired');
    }
    expect(alertLine('alert.fired', { severity: 'low' })).toBe('Low alert (alert.fired)');
  });

  it('keeps the line on one line and within the Salesforce text length', () => {
    const line = alertLine('alert.fired', { title: 'A\nB\t C', message: 'x'.repeat(1000) });
    expect(line.startsWith('A B C — x')).toBe(true);
    expect(line).not.toMatch(/\n/);
    expect(line.length).toBe(ALERT_LINE_MAX);
  });
});

describe('alertFromEvent', () => {
  const received = new Date('2026-11-23T10:00:00Z');

  it('takes the slug and the event time', () => {
    expect(
      alertFromEvent(
        { type: 'alert.fired', created_at: '2026-11-23T09:59:58+01:00', data: { slug: 'acme', title: 'T' } },
        received,
      ),
    ).toEqual({ slug: 'acme', line: 'T', at: '2026-11-23T08:59:58.000Z' });
  });

  it('never throws: no slug, a slug that is not text, an unreadable time', () => {
    expect(
      alertFromEvent({ type: 'alert.fired', created_at: 'yesterday', data: { slug: 7 } }, received),
    ).toEqual({ slug: '7', line: 'alert.fired', at: received.toISOString() });
    expect(alertFromEvent({ type: 'alert.fired', data: [] }, received).slug).toBeNull();
    expect(alertFromEvent({ type: 'alert.fired', data: { slug: ' ' } }, received).slug).toBeNull();
    expect(
      alertFromEvent({ type: 'alert.fired', data: { slug: 'x'.repeat(600) } }, received).slug,
    ).toBeNull();
  });
});
