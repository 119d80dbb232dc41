import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { SALESFORCE_REVOKE_PATH } from '../oauth/revoke.js';
import { BulkJobs } from './bulk-jobs.js';
import { ChangeEventSelection } from './change-event-selection.js';
import { apiChangeOrigin, callOptionsClient } from './change-origin.js';
import {
  type AccountSharing,
  type Faults,
  type IntegrationUserAccess,
  type LocalConsent,
  LocalOrg,
  type LocalSalesforceOptions,
  OAuthError,
  SalesforceApiError,
  type SeedAccount,
  type StoredAccount,
} from './org.js';
import { LocalPubSub } from './pubsub-server.js';
import { escapeXml, parseSoapCall, runMetadataCall, soapEnvelope, soapFault } from './soap.js';
import { SoqlError } from './soql.js';

/**
 * A local Salesforce for tests and the demo — not a Salesforce implementation. It answers, at the HTTP level,
 * the endpoints the connector uses so the real jsforce code runs against it unchanged: the OAuth web server
 * flow with PKCE (its login URL is its own URL), the identity URL and userinfo, SOQL query / queryMore /
 * queryAll, sObject Collections PATCH, PermissionSetAssignment create, the Metadata API upsert/read over SOAP,
 * Bulk API 2.0 ingest, and the limits resource. Every API response carries `Sforce-Limit-Info`; errors use
 * Salesforce's bodies (`[{message, errorCode, fields}]`, SOAP faults, OAuth `{error, error_description}`).
 */

export interface ListeningLocalSalesforce {
  url: string;
  close(): Promise<void>;
}

const VERSION = /^v\d{2,3}\.0$/;

/**
 * The API versions the stand-in serves, as an org on the Winter '27 release does: 31.0 up to 68.0. Salesforce
 * retired 21.0-30.0 in Summer '25 (REST answers 410 GONE, SOAP 500 UNSUPPORTED_API_VERSION); a version newer
 * than the org's release is a resource that does not exist (404 NOT_FOUND).
 */
export const SERVED_API_VERSIONS = { oldest: 31, newest: 68 } as const;

type VersionVerdict = 'served' | 'retired' | 'unknown';

function versionVerdict(version: string): VersionVerdict {
  if (!VERSION.test(version)) return 'unknown';
  const major = Number.parseInt(version.slice(1), 10);
  if (major > SERVED_API_VERSIONS.newest) return 'unknown';
  return major < SERVED_API_VERSIONS.oldest ? 'retired' : 'served';
}

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  return h?.startsWith('Bearer ') ? h.slice(7) : undefined;
}

/** The client a call named in its call options, which its writes' change events carry (change-origin.ts). */
function callClient(req: Request): string | null {
  return callOptionsClient(req.get('sforce-call-options'));
}

function baseUrl(req: Request): string {
  return `${req.protocol}://${req.get('host')}`;
}

function sfError(
  res: Response,
  status: number,
  errorCode: string,
  message: string,
  fields: string[] = [],
): void {
  res.status(status).json([{ message, errorCode, fields }]);
}

export class LocalSalesforce {
  readonly app: Express;
  readonly org: LocalOrg;
  /** The org's Pub/Sub API (Change Data Capture for Accounts); `pubsub.listen()` serves it over gRPC. */
  readonly pubsub: LocalPubSub;
  /** The org's Change Data Capture selections (Tooling API's PlatformEventChannelMember). */
  readonly changeEventSelection: ChangeEventSelection;
  private readonly bulk: BulkJobs;

  constructor(options: LocalSalesforceOptions = {}) {
    this.org = new LocalOrg(options);
    this.changeEventSelection = new ChangeEventSelection(
      {
        accountSelected: options.accountChangeEvents ?? true,
        entityLimitReached: options.changeEventEntityLimitReached ?? false,
      },
      () => this.org.options.canModifyMetadata,
    );
    this.pubsub = new LocalPubSub(this.org, this.changeEventSelection);
    this.bulk = new BulkJobs(this.org);
    this.app = this.buildApp();
  }

  // ---- helpers for tests and the demo ----

  get orgId(): string {
    return this.org.orgId;
  }

  get integrationUserId(): string {
    return this.org.integrationUserId;
  }

  get personUserId(): string {
    return this.org.personUserId;
  }

  seedAccounts(input: number | SeedAccount[]): StoredAccount[] {
    return this.org.seedAccounts(input);
  }

  getAccount(id: string): StoredAccount | undefined {
    return this.org.getAccount(id);
  }

  updateAccountAsPerson(id: string, fields: Record<string, string | number | null>): StoredAccount {
    return this.org.updateAccountAsPerson(id, fields);
  }

  deleteAccount(id: string, options: { mergedInto?: string } = {}): void {
    this.org.deleteAccount(id, options);
  }

  /** A person merges `loserIds` (one or two) into `masterId`, keeping the master's values unless `keep` says. */
  mergeAccounts(
    masterId: string,
    loserIds: string[],
    keep: Record<string, string | number | null> = {},
  ): void {
    this.org.mergeAccounts(masterId, loserIds, keep);
  }

  /** Empties the recycle bin of a deleted Account (queryAll no longer sees it; the delete log still does). */
  undeleteAccount(id: string): void {
    this.org.undeleteAccount(id);
  }

  purgeAccount(id: string): void {
    this.org.purgeAccount(id);
  }

  /** An admin renames a value of Task's Status picklist (TaskStatus). */
  renameTaskStatus(from: string, to: string): void {
    this.org.renameTaskStatus(from, to);
  }

  /** Bulk API 2.0 jobs still running complete now and apply their rows (aborted ones never do). */
  finishBulkJobs(): void {
    this.bulk.finishPending();
  }

  /** Lets time pass in the org (stamps, Date header, the delete log's window) without waiting. */
  advanceClock(ms: number): void {
    this.org.advanceClock(ms);
  }

  /** Empties the recycle bin: deleted Accounts leave queryAll and the delete log's window starts now. */
  emptyRecycleBin(): void {
    this.org.emptyRecycleBin();
  }

  injectFaults(faults: Partial<Faults> & { seed?: number }): void {
    this.org.injectFaults(faults);
  }

  /** Injects `faults` once `collections` more collection writes have been answered (a fault mid-batch). */
  injectFaultsAfterCollections(collections: number, faults: Partial<Faults>): void {
    this.org.injectFaultsAfterCollections(collections, faults);
  }

  clearFaults(): void {
    this.org.clearFaults();
  }

  setApiUsage(used: number, limit?: number): void {
    this.org.setApiUsage(used, limit);
  }

  apiUsage(): { used: number; limit: number } {
    return { used: this.org.apiUsed, limit: this.org.apiLimit };
  }

  /** Requests per route since the start or the last reset, e.g. `{ query: 1, queryMore: 4 }`. */
  counters(): Record<string, number> {
    return this.org.counts();
  }

  /** Records per collection write since the start or the last reset, in order. */
  collectionSizes(): number[] {
    return [...this.org.collectionSizes];
  }

  resetCounters(): void {
    this.org.resetCounts();
  }

  /** A token for the integration user without OAuth (token mode, or tests that skip the install). */
  issueAccessToken(): string {
    return this.org.issueAccessToken();
  }

  /** A refresh token for the integration user, as the OAuth install would leave (tests that skip the consent). */
  issueRefreshToken(): string {
    return this.org.issueRefreshToken(this.org.integrationUserId);
  }

  expireAccessTokens(): void {
    this.org.expireAccessTokens();
  }

  revokeRefreshTokens(): void {
    this.org.revokeRefreshTokens();
  }

  /** What `Organization.IsSandbox` answers. */
  setIsSandbox(isSandbox: boolean): void {
    this.org.isSandbox = isSandbox;
  }

  /** Account's org-wide default, and what the integration user's profile adds (View All on Account, View All Data). */
  setAccountVisibility(sharing: AccountSharing, access: IntegrationUserAccess): void {
    this.org.accountSharing = sharing;
    this.org.integrationUserAccess = access;
  }

  /** Turns Person Accounts on (Account's `IsPersonAccount`; people may then be seeded beside companies). */
  enablePersonAccounts(): void {
    this.org.options.personAccounts = true;
  }

  /** Turns State and Country/Territory Picklists on or off (Account's `…CountryCode` fields). */
  setCountryPicklists(on: boolean): void {
    this.org.countryPicklists = on;
  }

  expireQueryLocators(): void {
    this.org.expireQueryLocators();
  }

  /** What the next authorization request answers: the user approves (default) or declines. */
  setConsent(consent: LocalConsent): void {
    this.org.consent = consent;
  }

  customFieldNames(): string[] {
    return [...this.org.customFields.keys()].sort();
  }

  isPermissionSetAssigned(name: string): boolean {
    return this.org.isPermissionSetAssigned(name);
  }

  apiVersionsSeen(): string[] {
    return [...this.org.versionsSeen].sort();
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<ListeningLocalSalesforce> {
    const server = this.app.listen(port, host);
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const address = server.address() as AddressInfo;
    return {
      url: `http://${host}:${address.port}`,
      close: () =>
        new Promise<void>((resolve, reject) => {
          server.closeAllConnections();
          server.close((err) => (err ? reject(err) : resolve()));
        }),
    };
  }

  // ---- HTTP ----

  private buildApp(): Express {
    const app = express();
    app.disable('x-powered-by');
    // The Date header follows the org's clock, so a test that moves the clock moves "now" for clients too.
    app.use((_req, res, next) => {
      res.setHeader('Date', new Date(this.org.now()).toUTCString());
      next();
    });
    app.use(express.json({ limit: '50mb', type: ['application/json'] }));
    app.use(express.text({ limit: '150mb', type: ['text/xml', 'text/csv'] }));
    app.use(express.urlencoded({ extended: false, type: ['application/x-www-form-urlencoded'] }));

    this.oauthRoutes(app);
    this.restRoutes(app);
    this.soapRoutes(app);

    app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
      if (res.headersSent) return next(err);
      if (err instanceof SyntaxError) return sfError(res, 400, 'JSON_PARSER_ERROR', err.message);
      return sfError(res, 500, 'UNKNOWN_EXCEPTION', err instanceof Error ? err.message : String(err));
    });
    return app;
  }

  private oauthRoutes(app: Express): void {
    const org = this.org;

    app.get('/services/oauth2/authorize', (req, res) => {
      org.count('oauth.authorize');
      const q = (name: string) =>
        typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined;
      const redirectUri = q('redirect_uri');
      if (q('client_id') !== org.clientId) {
        res
          .status(400)
          .type('text')
          .send('error=invalid_client_id&error_description=client identifier invalid');
        return;
      }
      if (!redirectUri || (org.options.callbackUrls && !org.options.callbackUrls.includes(redirectUri))) {
        res
          .status(400)
          .type('text')
          .send('error=redirect_uri_mismatch&error_description=redirect_uri must match configuration');
        return;
      }
      const back = new URL(redirectUri);
      const state = q('state');
      if (state !== undefined) back.searchParams.set('state', state);
      const challenge = q('code_challenge') ?? null;
      if (q('response_type') !== 'code') {
        back.searchParams.set('error', 'unsupported_response_type');
      } else if (org.options.requirePkce && !challenge) {
        back.searchParams.set('error', 'invalid_request');
        back.searchParams.set('error_description', 'missing required code challenge');
      } else if (challenge && (q('code_challenge_method') ?? 'S256') !== 'S256') {
        // The stand-in verifies S256 challenges only.
        back.searchParams.set('error', 'invalid_request');
        back.searchParams.set('error_description', 'unsupported code challenge method');
      } else if (org.consent === 'deny') {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'end-user denied authorization');
      } else if (org.consent === 'uninstalled') {
        back.searchParams.set('error', 'invalid_client');
        back.searchParams.set('error_description', 'app must be installed into org');
      } else if (org.consent === 'not_approved') {
        back.searchParams.set('error', 'OAUTH_APP_ACCESS_DENIED');
        back.searchParams.set('error_description', 'user is not admin approved to access this app');
      } else {
        back.searchParams.set(
          'code',
          org.createAuthCode({ clientId: org.clientId, redirectUri, challenge, scope: q('scope') ?? '' }),
        );
      }
      res.redirect(302, back.toString());
    });

    app.post(SALESFORCE_REVOKE_PATH, (req, res) => {
      org.count('oauth.revoke');
      const token = ((req.body ?? {}) as Record<string, string | undefined>).token;
      if (token && org.revokeToken(token)) {
        res.status(200).end();
        return;
      }
      res.status(400).json({ error: 'invalid_token', error_description: 'invalid token' });
    });

    app.post('/services/oauth2/token', (req, res) => {
      org.count('oauth.token');
      const body = (req.body ?? {}) as Record<string, string | undefined>;
      try {
        if (body.client_id !== org.clientId || body.client_secret !== org.clientSecret) {
          throw new OAuthError('invalid_client', 'invalid client credentials');
        }
        const base = baseUrl(req);
        const issuedAt = String(org.now());
        if (body.grant_type === 'authorization_code') {
          const { userId, scope } = org.redeemAuthCode(
            body.code ?? '',
            body.redirect_uri ?? '',
            body.code_verifier,
          );
          const id = `${base}/id/${org.orgId}/${userId}`;
          res.json({
            access_token: org.issueAccessToken(userId),
            refresh_token: org.issueRefreshToken(userId),
            signature: createHmac('sha256', org.clientSecret)
              .update(id + issuedAt)
              .digest('base64'),
            scope: scope || 'api refresh_token',
            instance_url: base,
            id,
            token_type: 'Bearer',
            issued_at: issuedAt,
          });
          return;
        }
        if (body.grant_type === 'refresh_token') {
          const fresh = org.refresh(body.refresh_token ?? '');
          const id = `${base}/id/${org.orgId}/${fresh.userId}`;
          res.json({
            access_token: fresh.accessToken,
            ...(fresh.refreshToken ? { refresh_token: fresh.refreshToken } : {}),
            signature: createHmac('sha256', org.clientSecret)
              .update(id + issuedAt)
              .digest('base64'),
            scope: 'api refresh_token',
            instance_url: base,
            id,
            token_type: 'Bearer',
            issued_at: issuedAt,
          });
          return;
        }
        throw new OAuthError('unsupported_grant_type', 'grant type not supported');
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        res.status(400).json({ error: err.error, error_description: err.description });
      }
    });

    const identity = (req: Request, res: Response, userId: string) => {
      const user = org.user(userId);
      const base = baseUrl(req);
      res.json({
        id: `${base}/id/${org.orgId}/${userId}`,
        sub: `${base}/id/${org.orgId}/${userId}`,
        user_id: userId,
        organization_id: org.orgId,
        username: user?.Username,
        preferred_username: user?.Username,
        display_name: user?.Name,
        name: user?.Name,
        user_type: 'STANDARD',
        active: true,
      });
    };

    app.get('/services/oauth2/userinfo', (req, res) => {
      org.count('oauth.userinfo');
      const userId = org.sessionUser(bearer(req));
      if (!userId || !org.options.userinfoAllowed) {
        res.status(403).type('text').send('Bad_OAuth_Token');
        return;
      }
      identity(req, res, userId);
    });

    app.get('/id/:orgId/:userId', (req, res) => {
      org.count('identity');
      const userId = org.sessionUser(bearer(req));
      if (!userId || req.params.orgId !== org.orgId || !org.user(req.params.userId)) {
        res.status(403).type('text').send('Bad_OAuth_Token');
        return;
      }
      identity(req, res, req.params.userId);
    });
  }

  /**
   * The checks in front of every REST call: session, injected faults, the daily allocation. Answers and
   * returns null when the call stops here; otherwise the calling user's id.
   */
  private admit(req: Request, res: Response, route: string): string | null {
    const org = this.org;
    org.count(route);
    const version = req.params.version;
    const verdict = typeof version === 'string' ? versionVerdict(version) : 'unknown';
    if (verdict === 'retired') {
      sfError(res, 410, 'GONE', `API version ${String(version).slice(1)} is retired and no longer available`);
      return null;
    }
    if (verdict !== 'served' || typeof version !== 'string') {
      sfError(res, 404, 'NOT_FOUND', 'The requested resource does not exist');
      return null;
    }
    org.versionsSeen.add(version);
    const userId = org.sessionUser(bearer(req));
    if (!userId || org.takeFault('sessionExpired')) {
      sfError(res, 401, 'INVALID_SESSION_ID', 'Session expired or invalid');
      return null;
    }
    if (org.takeFault('serverErrors')) {
      res.status(503).type('text').send('Service Unavailable');
      return null;
    }
    org.apiUsed++;
    res.set('Sforce-Limit-Info', org.limitInfo());
    if (org.takeFault('requestLimitExceeded')) {
      sfError(res, 403, 'REQUEST_LIMIT_EXCEEDED', 'ConcurrentPerOrgLongTxn Limit exceeded.');
      return null;
    }
    if (org.apiUsed > org.apiLimit) {
      sfError(res, 403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
      return null;
    }
    return userId;
  }

  /** Runs a handler, turning the org's errors into Salesforce error bodies. */
  private handle(route: string, fn: (req: Request, res: Response, userId: string) => void) {
    return (req: Request, res: Response) => {
      const userId = this.admit(req, res, route);
      if (!userId) return;
      try {
        fn(req, res, userId);
      } catch (err) {
        if (err instanceof SalesforceApiError)
          return sfError(res, err.status, err.errorCode, err.message, err.fields);
        if (err instanceof SoqlError) return sfError(res, 400, err.errorCode, err.message);
        throw err;
      }
    };
  }

  private restRoutes(app: Express): void {
    const org = this.org;
    const data = '/services/data/:version';

    const soql = (req: Request): string => {
      const q = req.query.q;
      if (typeof q !== 'string' || q === '')
        throw new SalesforceApiError(400, 'MALFORMED_QUERY', 'q is required');
      return q;
    };

    app.get(
      `${data}/query`,
      this.handle('query', (req, res) => {
        res.json(org.query(soql(req), { all: false, version: req.params.version as string }));
      }),
    );
    app.get(
      `${data}/queryAll`,
      this.handle('queryAll', (req, res) => {
        res.json(org.query(soql(req), { all: true, version: req.params.version as string }));
      }),
    );
    app.get(
      `${data}/sobjects/Account/deleted`,
      this.handle('getDeleted', (req, res) => {
        const at = (name: string): number => {
          const raw = req.query[name];
          const ms = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
          if (Number.isNaN(ms))
            throw new SalesforceApiError(
              400,
              'INVALID_REPLICATION_DATE',
              `${name} must be an ISO 8601 date-time`,
            );
          return ms;
        };
        res.json(org.deletedBetween(at('start'), at('end')));
      }),
    );
    app.get(
      `${data}/query/:locator`,
      this.handle('queryMore', (req, res) => {
        res.json(org.queryMore(req.params.locator as string));
      }),
    );

    app.patch(
      `${data}/composite/sobjects`,
      this.handle('composite.sobjects', (req, res, userId) => {
        const body = req.body as { allOrNone?: unknown; records?: unknown };
        const records = Array.isArray(body?.records) ? (body.records as Record<string, unknown>[]) : null;
        if (!records) throw new SalesforceApiError(400, 'JSON_PARSER_ERROR', 'records is required');
        if (records.length > 200) {
          throw new SalesforceApiError(
            400,
            'EXCEEDED_ID_LIMIT',
            'record limit reached. cannot submit more than 200 records into this call',
          );
        }
        if (body.allOrNone === true) {
          throw new SalesforceApiError(
            400,
            'INVALID_INPUT',
            'the local Salesforce only implements allOrNone: false',
          );
        }
        const fieldNames = new Set(
          records.flatMap((r) => Object.keys(r).filter((k) => k !== 'attributes' && k !== 'id')),
        );
        org.checkFieldsExist(fieldNames);
        if (org.takeFault('lockRowWholeCall')) {
          throw new SalesforceApiError(
            400,
            'UNABLE_TO_LOCK_ROW',
            'unable to obtain exclusive access to this record or 200 records',
          );
        }
        org.collectionSizes.push(records.length);
        const origin = apiChangeOrigin('rest', req.params.version as string, callClient(req));
        const results = records.map((record) => {
          const { attributes, id, ...fields } = record;
          const type = (attributes as { type?: unknown } | undefined)?.type;
          if (type !== 'Account') {
            return {
              success: false,
              errors: [
                { statusCode: 'INVALID_TYPE', message: 'only Account records are supported', fields: [] },
              ],
            };
          }
          const failure = org.updateAccount(userId, String(id ?? ''), fields, { injectFaults: true, origin });
          return failure
            ? { id: String(id ?? ''), success: false, errors: [failure] }
            : { id: String(id), success: true, errors: [] };
        });
        res.json(results);
        org.collectionAnswered();
      }),
    );

    app.post(
      `${data}/sobjects/Task`,
      this.handle('sobjects.Task', (req, res, userId) => {
        const id = org.createTask(userId, (req.body ?? {}) as Record<string, unknown>);
        res.status(201).json({ id, success: true, errors: [] });
      }),
    );

    app.post(
      `${data}/sobjects/PermissionSetAssignment`,
      this.handle('sobjects.PermissionSetAssignment', (req, res) => {
        const body = (req.body ?? {}) as { AssigneeId?: unknown; PermissionSetId?: unknown };
        const id = org.assignPermissionSet(String(body.AssigneeId ?? ''), String(body.PermissionSetId ?? ''));
        res.status(201).json({ id, success: true, errors: [] });
      }),
    );

    app.get(
      `${data}/chatter/users/me`,
      this.handle('chatter.users.me', (_req, res, userId) => {
        if (!org.options.chatterEnabled) {
          throw new SalesforceApiError(
            403,
            'FUNCTIONALITY_NOT_ENABLED',
            'Chatter is not enabled for this organization.',
          );
        }
        const user = org.user(userId);
        res.json({ id: userId, username: user?.Username, name: user?.Name, type: 'User' });
      }),
    );

    app.get(
      `${data}/sobjects/Account/describe`,
      this.handle('describe.Account', (_req, res) => {
        const custom = [...org.customFields.values()].map((f) => ({
          name: f.fullName,
          label: f.label,
          type:
            f.type === 'Number'
              ? 'double'
              : f.type === 'DateTime'
                ? 'datetime'
                : f.type === 'Url'
                  ? 'url'
                  : f.type === 'LongTextArea'
                    ? 'textarea'
                    : 'string',
          length: f.length ?? 0,
          precision: f.precision ?? 0,
          scale: f.scale ?? 0,
          custom: true,
          updateable: true,
        }));
        // The standard fields the connector reads, the picklists' code fields among them when they are on.
        const standard = org.accountStandardFields().map((name) => ({
          name,
          label: name,
          type: name.endsWith('CountryCode') ? 'picklist' : 'string',
          custom: false,
          updateable: name !== 'Id',
        }));
        res.json({
          name: 'Account',
          label: 'Account',
          updateable: true,
          queryable: true,
          fields: [...standard, ...custom],
        });
      }),
    );

    app.get(
      `${data}/limits`,
      this.handle('limits', (_req, res) => {
        res.json({
          DailyApiRequests: { Max: org.apiLimit, Remaining: Math.max(0, org.apiLimit - org.apiUsed) },
        });
      }),
    );

    const jobs = `${data}/jobs/ingest`;
    app.post(
      jobs,
      this.handle('bulk.createJob', (req, res, userId) => {
        const origin = apiChangeOrigin('bulkapi', req.params.version as string, callClient(req));
        const job = this.bulk.create(userId, origin, (req.body ?? {}) as Record<string, unknown>);
        res.json(this.bulk.info(job, req.params.version as string));
      }),
    );
    app.put(
      `${jobs}/:id/batches`,
      this.handle('bulk.upload', (req, res) => {
        if (typeof req.body !== 'string')
          throw new SalesforceApiError(400, 'INVALIDJOB', 'expected text/csv');
        this.bulk.upload(req.params.id as string, req.body);
        res.status(201).end();
      }),
    );
    app.patch(
      `${jobs}/:id`,
      this.handle('bulk.setState', (req, res) => {
        const job = this.bulk.setState(
          req.params.id as string,
          (req.body as { state?: unknown } | undefined)?.state,
        );
        res.json(this.bulk.info(job, req.params.version as string));
      }),
    );
    app.get(
      `${jobs}/:id`,
      this.handle('bulk.check', (req, res) => {
        res.json(this.bulk.info(this.bulk.check(req.params.id as string), req.params.version as string));
      }),
    );
    for (const kind of ['successfulResults', 'failedResults', 'unprocessedrecords'] as const) {
      app.get(
        `${jobs}/:id/${kind}`,
        this.handle(`bulk.${kind}`, (req, res) => {
          res.type('text/csv').send(this.bulk.results(req.params.id as string, kind));
        }),
      );
    }
    app.delete(
      `${jobs}/:id`,
      this.handle('bulk.delete', (req, res) => {
        this.bulk.delete(req.params.id as string);
        res.status(204).end();
      }),
    );

    // Change Data Capture selections: the Tooling API's PlatformEventChannelMember, query and create.
    app.get(
      `${data}/tooling/query`,
      this.handle('tooling.query', (req, res) => {
        res.json(this.changeEventSelection.query(soql(req)));
      }),
    );
    app.post(
      `${data}/tooling/sobjects/PlatformEventChannelMember`,
      this.handle('tooling.PlatformEventChannelMember', (req, res) => {
        const id = this.changeEventSelection.create(req.body);
        res.status(201).json({ id, success: true, errors: [], warnings: [], infos: [] });
      }),
    );

    app.use('/services/data', (_req, res) =>
      sfError(res, 404, 'NOT_FOUND', 'The requested resource does not exist'),
    );
  }

  private soapRoutes(app: Express): void {
    const org = this.org;
    app.post('/services/Soap/m/:version', (req, res) => {
      const xml = typeof req.body === 'string' ? req.body : '';
      const fault = (status: number, code: string, message: string) =>
        res.status(status).type('text/xml').send(soapFault(code, message));
      let call: ReturnType<typeof parseSoapCall>;
      try {
        call = parseSoapCall(xml);
      } catch (err) {
        return fault(500, 'INVALID_XML', err instanceof Error ? err.message : 'unreadable envelope');
      }
      org.count(`soap.${call.method || 'unknown'}`);
      const version = `v${req.params.version}`;
      if (versionVerdict(version) !== 'served') {
        return fault(
          500,
          'UNSUPPORTED_API_VERSION',
          `UNSUPPORTED_API_VERSION: Invalid Api version specified on URL`,
        );
      }
      org.versionsSeen.add(version);
      const userId = org.sessionUser(call.sessionId);
      if (!userId || org.takeFault('sessionExpired')) {
        return fault(500, 'INVALID_SESSION_ID', 'Invalid Session ID found in SessionHeader: Illegal Session');
      }
      if (org.takeFault('serverErrors')) return res.status(503).type('text').send('Service Unavailable');
      org.apiUsed++;
      res.set('Sforce-Limit-Info', org.limitInfo());
      if (org.takeFault('requestLimitExceeded')) {
        return fault(500, 'REQUEST_LIMIT_EXCEEDED', 'ConcurrentPerOrgLongTxn Limit exceeded.');
      }
      const outcome = runMetadataCall(org, call);
      if ('fault' in outcome) return fault(500, outcome.fault.code, escapeXml(outcome.fault.message));
      return res.type('text/xml').send(soapEnvelope(outcome.body));
    });
  }
}

export function createLocalSalesforce(options: LocalSalesforceOptions = {}): LocalSalesforce {
  return new LocalSalesforce(options);
}
