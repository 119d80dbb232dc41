import autocannon from 'autocannon';
import { Webhook } from 'standardwebhooks';

/**
 * Load of signed report-service events for the webhook benchmarks: every request a distinct `score.changed`,
 * signed with the Standard Webhooks scheme before the load starts, so the load generator spends its time
 * sending, not signing.
 */

export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

/** `count` distinct score.changed events over `slugs`, ids `msg_<tag>_<n>`, each signed now with `secret`. */
export function signedPool(
  secret: string,
  slugs: readonly string[],
  count: number,
  tag: string,
): SignedRequest[] {
  const signer = new Webhook(secret);
  const now = new Date();
  const pool: SignedRequest[] = [];
  for (let i = 0; i < count; i++) {
    const id = `msg_${tag}_${i}`;
    const body = JSON.stringify({
      id,
      type: 'score.changed',
      created_at: now.toISOString(),
      data: { slug: slugs[i % slugs.length], score: { overall: 50 + (i % 40), band: 'moderate' } },
    });
    pool.push({
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(id, now, body),
      },
      body,
    });
  }
  return pool;
}

export interface LoadResult {
  ackedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  sent: number;
}

/** Posts the pool's requests in order on `connections` connections for `durationS`; fails if it runs out. */
export async function postSignedLoad(
  url: string,
  pool: SignedRequest[],
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    duration: durationS,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const signed = pool[next++ % pool.length]!;
          return { ...request, headers: signed.headers, body: signed.body };
        },
      },
    ],
  });
  if (next > pool.length) throw new Error(`the pool of ${pool.length} signed events ran out: make it larger`);
  return {
    ackedPerSecond: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    sent: result.requests.sent,
  };
}
