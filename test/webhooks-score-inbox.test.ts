import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ScoreChangeInbox } from '../src/pipeline/score-changes/inbox.js';
import { EventLog } from '../src/storage/event-log.js';
import { Keys } from '../src/storage/keys.js';
import { ReportWebhookHandler, type WebhookDelivery } from '../src/webhooks/report-route.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';
import { scoreChangedEvent, signedHeaders } from './support/report-webhooks.js';

/**
 * The report route records a `score.changed` in the score-change inbox itself and queues the inbox's fan-out
 * only when the inbox says none is queued; a fan-out that cannot be queued leaves the event acknowledged (its
 * mark waits for the next event's kick, which comes at once, or the periodic sweep).
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('score-inbox');
const SECRET = `whsec_${Buffer.from('a score inbox secret of 32 bytes').toString('base64')}`;

function delivery(slug: string, id = `msg_${randomUUID()}`): WebhookDelivery {
  const body = JSON.stringify(scoreChangedEvent(id, slug));
  return {
    raw: Buffer.from(body),
    headers: { 'content-type': 'application/json', ...signedHeaders(SECRET, body, id) },
    ip: '127.0.0.1',
  };
}

/** A route on an inbox of its own (a fresh key prefix) whose kicks are counted, or refused when `failKick`. */
function route(failKick = false) {
  const own = new Keys(freshPrefix());
  const inbox = new ScoreChangeInbox(redis(), own);
  const kicks = { count: 0 };
  const handler = new ReportWebhookHandler({
    events: new EventLog(redis(), own),
    scheme: 'standard',
    secrets: [SECRET],
    hexHeader: 'x-signature',
    enqueue: async () => {
      throw new Error('score.changed is never queued as a report-event job');
    },
    inbox,
    kickScoreChanges: async () => {
      kicks.count += 1;
      if (failKick) throw new Error('Connection is closed');
    },
    logger: pino({ level: 'silent' }),
  });
  return { handler, inbox, kicks };
}

describe('score.changed through the route into the inbox', () => {
  it('the first event on an idle inbox queues one fan-out; events meanwhile only add marks', async () => {
    const { handler, inbox, kicks } = route();
    expect((await handler.handle(delivery('acme'))).status).toBe(202);
    expect(kicks.count).toBe(1);
    expect((await handler.handle(delivery('globex'))).status).toBe(202);
    expect((await handler.handle(delivery('acme'))).status).toBe(202);
    expect(kicks.count).toBe(1);
    expect(await inbox.waiting()).toBe(2);
  });

  it('deliveries read in one turn are answered each for itself and queue one fan-out (issue 30)', async () => {
    const { handler, inbox, kicks } = route();
    const again = delivery('acme', 'msg_same_turn');
    const answers = await Promise.all([
      ...['acme', 'globex', 'initech', 'acme'].map((slug) => handler.handle(delivery(slug))),
      handler.handle(again),
      handler.handle(again),
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 200]);
    expect(kicks.count).toBe(1);
    expect(await inbox.waiting()).toBe(3);
  });

  it('a redelivery is a duplicate and queues nothing', async () => {
    const { handler, kicks } = route();
    const first = await handler.handle(delivery('initech', 'msg_again'));
    const again = await handler.handle(delivery('initech', 'msg_again'));
    expect(first.status).toBe(202);
    expect(again).toMatchObject({ status: 200, outcome: 'duplicate', body: { duplicate: true } });
    expect(kicks.count).toBe(1);
  });

  it('a fan-out that cannot be queued leaves the event acknowledged and its slug marked', async () => {
    const { handler, inbox, kicks } = route(true);
    const answer = await handler.handle(delivery('hooli'));
    expect(answer).toMatchObject({ status: 202, outcome: 'accepted' });
    expect(kicks.count).toBe(1);
    expect(await inbox.waiting()).toBe(1);
    // The next event tries to queue the fan-out again at once, not once the kick mark has lapsed.
    expect((await handler.handle(delivery('initech'))).status).toBe(202);
    expect(kicks.count).toBe(2);
    expect(await inbox.stranded()).toBe(true);
  });
});
