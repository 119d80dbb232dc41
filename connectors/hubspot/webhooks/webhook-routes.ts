import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { CrmChange } from '../../../src/crm/connector.js';
import type { WebhookEventMarks } from '../../../src/crm/provider.js';
import type { Logger } from '../../../src/log.js';
import { HubSpotPayloadError, HubSpotSignatureError } from '../errors.js';
import { HUBSPOT_WEBHOOK } from '../provider.js';
import { freshEvents, type HubSpotEvent, parseHubSpotEvents, toCrmChanges } from './webhook-events.js';
import { verifySignedRequest } from './webhook-signature.js';

export const HUBSPOT_WEBHOOK_PATH = '/webhooks/hubspot';

export interface HubSpotWebhookRouterDeps {
  clientSecret: string;
  /** `APP_URL`: HubSpot signs the public URL, which a proxy in front of the app may not pass on. */
  publicUrl: string;
  /** Must resolve only once the changes are durably queued; a throw answers 503 and HubSpot retries. */
  onChanges: (portalId: string, changes: CrmChange[]) => Promise<void>;
  /** Event ids taken in within the signature window: a repeated delivery is acknowledged and dropped. */
  marks?: WebhookEventMarks;
  /**
   * Answers 503 when the changes are not recorded by then (a hung Redis), well before HubSpot gives up (5 s);
   * the work goes on and is idempotent, so HubSpot's retry is dropped or taken in, never applied twice.
   */
  deadlineMs?: number;
  logger?: Logger;
  /** Epoch ms, for tests. */
  now?: () => number;
}

/**
 * `POST /webhooks/hubspot`: raw body (the signature covers its bytes), v3 signature (401), event list (400),
 * events already taken in dropped (`marks`), then `onChanges` per portal; 204 only after every portal's
 * changes are recorded, 503 if any could not be.
 */
export function createHubSpotWebhookRouter(deps: HubSpotWebhookRouterDeps): Router {
  const router = Router();
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');

  router.post(
    HUBSPOT_WEBHOOK_PATH,
    express.raw({ type: '*/*', limit: HUBSPOT_WEBHOOK.maxBodySize }),
    async (req: Request, res: Response) => {
      let rawBody: Buffer;
      try {
        rawBody = verifySignedRequest(req, {
          publicUrl,
          clientSecret: deps.clientSecret,
          ...(deps.now ? { now: deps.now } : {}),
        });
      } catch (err) {
        if (err instanceof HubSpotSignatureError) {
          res.status(401).json({ error: 'invalid_signature', reason: err.reason, message: err.message });
          return;
        }
        throw err;
      }

      let events: HubSpotEvent[];
      try {
        events = parseHubSpotEvents(rawBody);
      } catch (err) {
        if (err instanceof HubSpotPayloadError) {
          res.status(400).json({ error: 'invalid_payload', reason: err.reason, message: err.message });
          return;
        }
        throw err;
      }

      const record = async () => {
        const marks = deps.marks;
        const fresh = marks ? await freshEvents(events, (ids) => marks.unseen(ids)) : { events, ids: [] };
        const changes = toCrmChanges(fresh.events);
        await Promise.all([...changes].map(([portalId, list]) => deps.onChanges(portalId, list)));
        // Marked once queued: a delivery that failed before here is taken in when HubSpot sends it again.
        if (marks) await marks.remember(fresh.ids);
      };
      try {
        await (deps.deadlineMs ? withinDeadline(record(), deps.deadlineMs) : record());
      } catch (err) {
        deps.logger?.error({ err }, 'HubSpot webhook: changes could not be recorded; HubSpot will retry');
        res
          .status(503)
          .set('Retry-After', '5')
          .json({ error: 'unavailable', message: 'the events could not be recorded; retry later' });
        return;
      }
      res.status(204).end();
    },
  );

  // Body-parser failures (413 too large, 400 bad encoding) as short JSON, never a stack trace.
  router.use(HUBSPOT_WEBHOOK_PATH, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status =
      typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : undefined;
    if (status === 413) {
      res.status(413).json({ error: 'payload_too_large', message: 'the webhook body is over 1 MB' });
      return;
    }
    if (status !== undefined && status >= 400 && status < 500) {
      res.status(status).json({ error: 'bad_request', message: 'the webhook body could not be read' });
      return;
    }
    next(err);
  });

  return router;
}

export class WebhookDeadlineError extends Error {
  readonly code = 'WEBHOOK_DEADLINE';
  constructor(ms: number) {
    super(`the changes were not recorded within ${ms} ms`);
    this.name = 'WebhookDeadlineError';
  }
}

/** `work`, or a WebhookDeadlineError after `ms` (the work itself goes on); the timer keeps nothing alive. */
async function withinDeadline(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WebhookDeadlineError(ms)), ms);
    timer.unref();
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
