import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../../../src/redis.js';
import type { Keys } from '../../../src/storage/keys.js';
import type { SecretBox } from '../../../src/util/secretbox.js';
import { SALESFORCE_PROVIDER } from '../provider.js';

/** Hash of one connection: an External Client App's consumer key, sealed secret, login URL. */
function connectionKey(keys: Keys, id: string): string {
  return keys.provider(SALESFORCE_PROVIDER, 'connection', id);
}

/** Set of every connection id. */
function connectionsKey(keys: Keys): string {
  return keys.provider(SALESFORCE_PROVIDER, 'connections');
}

/**
 * Salesforce connections: one External Client App's consumer key, consumer secret and login URL, created by the
 * operator for an org (or a group of orgs) that cannot use the deployment's global app (SALESFORCE_CLIENT_ID).
 * A Local External Client App works only in the org that created it, so every further org brings an app of its
 * own and with it a connection here. The install link names the connection (`?connection=<id>`), and the
 * installation records it, so its token refresh and revoke use the same app.
 *
 * One Redis hash per connection (the secret sealed with the connection id as associated data, so a sealed
 * secret copied to another connection does not open) and one set of ids.
 */

export const CONNECTION_ID_PATTERN = /^sfc_[A-Za-z0-9_-]{16}$/;

export const connectionIdSchema = z.string().regex(CONNECTION_ID_PATTERN, 'expects a connection id (sfc_…)');

/** What an operator sends to create a connection. */
export const newConnectionSchema = z.object({
  label: z.string().trim().min(1).max(100),
  consumerKey: z.string().trim().min(1).max(256),
  consumerSecret: z.string().trim().min(1).max(256),
  loginUrl: z
    .url({ protocol: /^https?$/, error: 'expects an http(s) URL' })
    .transform((v) => v.replace(/\/+$/, '')),
});
export type NewConnection = z.infer<typeof newConnectionSchema>;

/** A connection as shown to the operator: never its secret. */
export const connectionViewSchema = z.object({
  id: connectionIdSchema,
  label: z.string(),
  consumerKey: z.string(),
  loginUrl: z.string(),
  createdAt: z.string(),
  /** The org of its first install: every later install through it must be that org's (absent until then). */
  orgId: z.string().optional(),
});
export type SalesforceConnection = z.infer<typeof connectionViewSchema>;

/** What the OAuth calls need: one app's keys and where its orgs sign in. */
export interface SalesforceAppCredentials {
  clientId: string;
  clientSecret: string;
  loginUrl: string;
}

export class ConnectionNotFoundError extends Error {
  readonly code = 'SALESFORCE_CONNECTION_NOT_FOUND';
  constructor(readonly connectionId: string) {
    super(`there is no Salesforce connection ${connectionId}`);
    this.name = 'ConnectionNotFoundError';
  }
}

export class SalesforceConnectionStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly box: SecretBox,
    private readonly keys: Keys,
  ) {}

  async create(input: NewConnection): Promise<SalesforceConnection> {
    const id = `sfc_${randomBytes(12).toString('base64url')}`;
    const view: SalesforceConnection = {
      id,
      label: input.label,
      consumerKey: input.consumerKey,
      loginUrl: input.loginUrl,
      createdAt: new Date().toISOString(),
    };
    // The id joins the set first: `list` skips an id whose hash is not written yet.
    await this.redis.sadd(connectionsKey(this.keys), id);
    await this.redis.hset(connectionKey(this.keys, id), {
      ...view,
      consumerSecret: this.box.seal(input.consumerSecret, id),
    });
    return view;
  }

  async get(id: string): Promise<SalesforceConnection | null> {
    if (!CONNECTION_ID_PATTERN.test(id)) return null;
    const h = await this.redis.hgetall(connectionKey(this.keys, id));
    if (!h.id) return null;
    return connectionViewSchema.parse({
      id: h.id,
      label: h.label,
      consumerKey: h.consumerKey,
      loginUrl: h.loginUrl,
      createdAt: h.createdAt,
      ...(h.orgId ? { orgId: h.orgId } : {}),
    });
  }

  /**
   * Binds the connection to `orgId` when nothing is bound yet (HSETNX: two first installs at once bind one) and
   * returns the org it is bound to, or null when the connection is gone. A connection is one org's External
   * Client App: an install through it that names another org is refused by the caller.
   */
  async bindOrg(id: string, orgId: string): Promise<string | null> {
    if (!CONNECTION_ID_PATTERN.test(id)) return null;
    const key = connectionKey(this.keys, id);
    if (!(await this.redis.hexists(key, 'id'))) return null;
    await this.redis.hsetnx(key, 'orgId', orgId);
    return this.redis.hget(key, 'orgId');
  }

  /** The connection's keys for an OAuth call; throws ConnectionNotFoundError when it was removed. */
  async credentials(id: string): Promise<SalesforceAppCredentials> {
    const view = await this.get(id);
    const sealed = view ? await this.redis.hget(connectionKey(this.keys, id), 'consumerSecret') : null;
    if (!view || !sealed) throw new ConnectionNotFoundError(id);
    return { clientId: view.consumerKey, clientSecret: this.box.open(sealed, id), loginUrl: view.loginUrl };
  }

  async list(): Promise<SalesforceConnection[]> {
    const ids = (await this.redis.smembers(connectionsKey(this.keys))).sort();
    const all = await Promise.all(ids.map((id) => this.get(id)));
    return all.filter((c): c is SalesforceConnection => c !== null);
  }

  /** Forgets a connection. Installations made through it can no longer refresh: they need a new install. */
  async remove(id: string): Promise<boolean> {
    if (!CONNECTION_ID_PATTERN.test(id)) return false;
    const removed = await this.redis.del(connectionKey(this.keys, id));
    await this.redis.srem(connectionsKey(this.keys), id);
    return removed > 0;
  }
}
