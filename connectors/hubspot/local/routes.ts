import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import {
  HUBSPOT_API_VERSIONS,
  HUBSPOT_RATE_HEADERS,
  HUBSPOT_RATE_POLICIES,
  HUBSPOT_SIZES,
  type HubSpotApiVersion,
  hubspotPaths,
} from '../provider.js';
import type { LocalCompanyStore, StoredCompany } from './company-store.js';
import {
  badRefreshTokenBody,
  crmError,
  type ErrorBody,
  invalidPropertiesBody,
  missingScopesBody,
  notFoundIdsError,
  notFoundPathBody,
  oauthErrorBody,
  rateLimitBody,
  recordValidationError,
  unauthorizedBody,
} from './error-bodies.js';
import type { LocalJournal } from './journal.js';
import type { RollingBudget } from './rolling-budget.js';
import type { GrantFailure, LocalTokenRegistry, LocalTokenUser } from './token-registry.js';

/**
 * The stand-in's HTTP surface: HubSpot's OAuth (authorize, token, introspection), account info, company
 * properties and groups, and the company list / batch read / batch update / search endpoints, each behind
 * HubSpot's access-token check, scope check, injectable faults and per-portal rate limits with HubSpot's
 * headers and bodies. Every API path is served in each date version the connector supports
 * (`/crm/objects/2026-09/companies`, ...); the numbered paths (`/crm/v3/...`, `/oauth/v1/...`) answer 404 and
 * are counted under `legacy`, so a test can prove nothing calls them. From 2026-09 on, a batch update checks
 * the portal's required properties and refuses the records that would miss one.
 */

export interface LocalFaults {
  /** Share (0..1) of API calls that answer `failStatus`. */
  failShare: number;
  /** The next N API calls answer `failStatus`. */
  failNext: number;
  failStatus: number;
  /** The next N API calls answer 429 TEN_SECONDLY_ROLLING whatever the budget says. */
  rateLimitNext: number;
  /** Every API call answers 429 DAILY. */
  dailyLimitExceeded: boolean;
  /** Added before every API answer. */
  latencyMs: number;
}

export const NO_FAULTS: LocalFaults = {
  failShare: 0,
  failNext: 0,
  failStatus: 503,
  rateLimitNext: 0,
  dailyLimitExceeded: false,
  latencyMs: 0,
};

export interface LocalHubSpotContext {
  portalId: string;
  store: LocalCompanyStore;
  tokens: LocalTokenRegistry;
  budget: RollingBudget;
  searchBudget: RollingBudget;
  dailyLimit: number;
  dailyUsed: { count: number };
  faults: LocalFaults;
  random: () => number;
  includeHubIdInTokenResponse: boolean;
  authorizeDecision: { value: 'approve' | 'deny' };
  /** The HubSpot user at the consent screen, and the scopes their permissions let them grant (null: any). */
  signedIn: { user: LocalTokenUser; grantable: readonly string[] | null };
  /** Calls per route, counted before any check (what the connector sent). */
  calls: Record<string, number>;
  /** Answers per status code. */
  statuses: Record<string, number>;
  /** Account details `timeZone` (IANA). */
  timeZone: { value: string };
  /** Account details `accountType`. */
  accountType: { value: string };
  /** Properties the portal's validation rules require (enforced on writes from API version 2026-09). */
  requiredProperties: Set<string>;
  /** The portal's unlabeled HUBSPOT_DEFINED note -> company association type, as its labels API answers. */
  noteToCompanyTypeId: { value: number };
  /** The webhooks journal (2026-03 paths), filled by a person's changes once the portal is subscribed. */
  journal: LocalJournal;
}

/** Versions from which HubSpot applies the portal's validation rules to API writes. */
const VALIDATING_VERSIONS: ReadonlySet<HubSpotApiVersion> = new Set(['2026-09']);

/** The user who installed the app: the consent screen's user unless a test signs in someone else. */
export const LOCAL_INSTALLER = { userId: '1001', email: 'installer@example.test' } as const;

const READ = 'crm.objects.companies.read';
const WRITE = 'crm.objects.companies.write';
/** Reading a property takes any of several scopes (HubSpot's properties spec, 2026-03): the connector has READ. */
const SCHEMA_READ = 'crm.schemas.companies.read';
const SCHEMA_WRITE = 'crm.schemas.companies.write';
/** What HubSpot's notes API lists for notes (the connector asks for it only for alert notes). */
const NOTES_WRITE = 'crm.objects.contacts.write';

function countStatus(ctx: LocalHubSpotContext): RequestHandler {
  return (_req, res, next) => {
    res.on('finish', () => {
      const key = String(res.statusCode);
      ctx.statuses[key] = (ctx.statuses[key] ?? 0) + 1;
    });
    next();
  };
}

function count(ctx: LocalHubSpotContext, route: string): RequestHandler {
  return (_req, _res, next) => {
    ctx.calls[route] = (ctx.calls[route] ?? 0) + 1;
    next();
  };
}

/** Token, scopes, faults and rate limits, in HubSpot's order, for one API route. */
/** Scopes a route needs: every one of a list, or any one of `anyOf` (as HubSpot's specs list property reads). */
type RouteScopes = string[] | { anyOf: string[] };

function missingOf(needed: RouteScopes, granted: readonly string[]): string[] {
  if (Array.isArray(needed)) return needed.filter((s) => !granted.includes(s));
  return needed.anyOf.some((s) => granted.includes(s)) ? [] : needed.anyOf;
}

function api(
  ctx: LocalHubSpotContext,
  route: string,
  scopes: RouteScopes,
  kind: 'standard' | 'search' = 'standard',
) {
  const guard: RequestHandler = async (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
    const check = ctx.tokens.check(token);
    if (!check.ok) {
      res.status(401).json(unauthorizedBody(check.expiredAgoMs));
      return;
    }
    const missing = missingOf(scopes, check.scopes);
    if (missing.length > 0) {
      res.status(403).json(missingScopesBody(missing));
      return;
    }
    if (ctx.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, ctx.faults.latencyMs));
    if (ctx.faults.dailyLimitExceeded) {
      res.status(429).json(rateLimitBody(HUBSPOT_RATE_POLICIES.daily));
      return;
    }
    if (ctx.faults.failNext > 0 || (ctx.faults.failShare > 0 && ctx.random() < ctx.faults.failShare)) {
      if (ctx.faults.failNext > 0) ctx.faults.failNext--;
      res
        .status(ctx.faults.failStatus)
        .json(crmError('INTERNAL_ERROR', 'Internal error (injected by the local HubSpot)'));
      return;
    }
    if (kind === 'search') {
      const slot = ctx.searchBudget.take();
      if (!slot.allowed) {
        res.status(429).json(rateLimitBody(HUBSPOT_RATE_POLICIES.secondly));
        return;
      }
    } else {
      const forced = ctx.faults.rateLimitNext > 0;
      if (forced) ctx.faults.rateLimitNext--;
      const slot = forced ? { allowed: false, remaining: 0 } : ctx.budget.take();
      res.set(HUBSPOT_RATE_HEADERS.max, String(ctx.budget.max));
      res.set(HUBSPOT_RATE_HEADERS.remaining, String(slot.remaining));
      res.set(HUBSPOT_RATE_HEADERS.intervalMs, String(ctx.budget.intervalMs));
      if (!slot.allowed) {
        res.status(429).json(rateLimitBody(HUBSPOT_RATE_POLICIES.tenSecondly));
        return;
      }
    }
    if (check.kind === 'private') {
      ctx.dailyUsed.count++;
      res.set(HUBSPOT_RATE_HEADERS.daily, String(ctx.dailyLimit));
      res.set(HUBSPOT_RATE_HEADERS.dailyRemaining, String(Math.max(0, ctx.dailyLimit - ctx.dailyUsed.count)));
    }
    next();
  };
  return [count(ctx, route), guard];
}

function requestedProperties(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.filter((p): p is string => typeof p === 'string');
  if (typeof raw === 'string')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return [];
}

function objectBody(req: Request): Record<string, unknown> {
  return typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body)
    ? (req.body as Record<string, unknown>)
    : {};
}

function inputIds(body: Record<string, unknown>): string[] | null {
  if (!Array.isArray(body.inputs)) return null;
  const ids: string[] = [];
  for (const input of body.inputs) {
    if (typeof input !== 'object' || input === null || !('id' in input)) return null;
    ids.push(String(input.id));
  }
  return ids;
}

function batchAnswer(
  res: Response,
  results: unknown[],
  missing: string[],
  startedAt: string,
  recordErrors: ErrorBody[] = [],
): void {
  const completedAt = new Date().toISOString();
  const errors = [...(missing.length > 0 ? [notFoundIdsError(missing)] : []), ...recordErrors];
  if (errors.length === 0) {
    res.status(200).json({ status: 'COMPLETE', results, startedAt, completedAt });
    return;
  }
  res.status(207).json({
    status: 'COMPLETE',
    results,
    numErrors: errors.length,
    errors,
    startedAt,
    completedAt,
  });
}

const GRANT_FAILURES: Record<GrantFailure, () => Record<string, unknown>> = {
  bad_client: () =>
    oauthErrorBody('invalid_client', 'BAD_CLIENT_ID', 'missing or unknown client id or secret'),
  bad_code: () =>
    oauthErrorBody('invalid_grant', 'BAD_AUTH_CODE', 'auth code not found, expired or already used'),
  bad_redirect_uri: () =>
    oauthErrorBody(
      'invalid_grant',
      'BAD_REDIRECT_URI',
      'redirect_uri does not match the one used to authorize',
    ),
  bad_refresh_token: badRefreshTokenBody,
};

export function createLocalHubSpotApp(ctx: LocalHubSpotContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(countStatus(ctx));
  const json = express.json({ limit: '5mb' });
  const form = express.urlencoded({ extended: false });

  // ---- OAuth ------------------------------------------------------------------------------------------------

  /** The consent screen, approved (or denied) at once. */
  app.get('/oauth/authorize', count(ctx, 'oauth.authorize'), (req, res) => {
    const q = req.query;
    const redirectUri = typeof q.redirect_uri === 'string' ? q.redirect_uri : undefined;
    if (!redirectUri || typeof q.client_id !== 'string' || !ctx.tokens.knowsClient(q.client_id)) {
      res.status(400).type('text').send('local HubSpot: unknown client_id or missing redirect_uri');
      return;
    }
    const target = new URL(redirectUri);
    if (typeof q.state === 'string') target.searchParams.set('state', q.state);
    if (ctx.authorizeDecision.value === 'deny') {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user declined to install the app');
    } else {
      const requested = typeof q.scope === 'string' ? q.scope.split(/[ +]/).filter(Boolean) : undefined;
      // The local consent grants every optional scope asked for, as a portal admin who accepts them would.
      const optional =
        typeof q.optional_scope === 'string' ? q.optional_scope.split(/[ +]/).filter(Boolean) : [];
      const scopes = requested ? [...requested, ...optional] : undefined;
      // HubSpot lets a user authorize only the scopes their own permissions cover: a user who may view
      // companies but not edit them is stopped at the consent screen, and nothing reaches the app.
      const { user, grantable } = ctx.signedIn;
      const refused = (scopes ?? []).filter((s) => grantable !== null && !grantable.includes(s));
      if (refused.length > 0) {
        res
          .status(403)
          .type('text')
          .send('local HubSpot: you do not have the correct role to grant these permissions');
        return;
      }
      target.searchParams.set(
        'code',
        ctx.tokens.issueAuthCode({ redirectUri, user, ...(scopes ? { scopes } : {}) }),
      );
    }
    res.redirect(302, target.toString());
  });

  for (const version of HUBSPOT_API_VERSIONS) {
    const paths = hubspotPaths(version);
    const validates = VALIDATING_VERSIONS.has(version);
    app.post(paths.token, count(ctx, 'oauth.token'), form, (req, res) => {
      const inQuery = ['client_secret', 'code', 'refresh_token'].filter((k) => k in req.query);
      const body = objectBody(req);
      if (inQuery.length > 0 || !req.is('application/x-www-form-urlencoded')) {
        res
          .status(400)
          .json(
            oauthErrorBody(
              'invalid_request',
              'BAD_REQUEST',
              'v3 token requests take form-encoded parameters in the body',
            ),
          );
        return;
      }
      const param = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined);
      if (!ctx.tokens.clientMatches(param('client_id'), param('client_secret'))) {
        res.status(400).json(GRANT_FAILURES.bad_client());
        return;
      }
      const grant = param('grant_type');
      if (grant === 'client_credentials') {
        const issued = ctx.tokens.clientCredentials(param('scope'));
        if (issued === 'bad_scope') {
          res
            .status(400)
            .json(oauthErrorBody('invalid_scope', 'BAD_SCOPES', 'scope must list journal scopes'));
          return;
        }
        res.json({
          token_type: 'bearer',
          access_token: issued.accessToken,
          expires_in: issued.expiresInSeconds,
        });
        return;
      }
      const outcome =
        grant === 'authorization_code'
          ? ctx.tokens.exchangeCode(param('code'), param('redirect_uri'))
          : grant === 'refresh_token'
            ? ctx.tokens.refreshAccess(param('refresh_token'))
            : null;
      if (outcome === null) {
        res
          .status(400)
          .json(oauthErrorBody('unsupported_grant_type', 'BAD_GRANT_TYPE', 'unsupported grant_type'));
        return;
      }
      if (typeof outcome === 'string') {
        res.status(400).json(GRANT_FAILURES[outcome]());
        return;
      }
      res.json({
        token_type: 'bearer',
        access_token: outcome.accessToken,
        refresh_token: outcome.refreshToken,
        expires_in: outcome.expiresInSeconds,
        scopes: outcome.scopes,
        ...(ctx.includeHubIdInTokenResponse ? { hub_id: Number(ctx.portalId) } : {}),
      });
    });

    app.post(paths.introspect, count(ctx, 'oauth.introspect'), form, (req, res) => {
      const body = objectBody(req);
      if (!ctx.tokens.clientMatches(String(body.client_id), String(body.client_secret))) {
        res.status(400).json(GRANT_FAILURES.bad_client());
        return;
      }
      const info = ctx.tokens.introspect(typeof body.token === 'string' ? body.token : undefined);
      if (!info.active) {
        res.json({ active: false });
        return;
      }
      // HubSpot's 2026-03 answer: the portal (hub_id) and the user the token was issued to (user_id, user).
      const hubId = info.user?.hubId ?? ctx.portalId;
      res.json({
        active: true,
        token_use: 'access_token',
        token_type: 'access_token',
        client_id: body.client_id,
        hub_id: Number(hubId),
        user_id: Number(info.user?.userId ?? LOCAL_INSTALLER.userId),
        user: info.user?.email ?? LOCAL_INSTALLER.email,
        hub_domain: `portal-${hubId}.example.test`,
        scopes: info.scopes ?? [],
        scope: (info.scopes ?? []).join(' '),
        exp: Math.floor((info.expiresAt ?? 0) / 1000),
      });
    });

    app.post(paths.tokenRevoke, count(ctx, 'oauth.revoke'), form, (req, res) => {
      const body = objectBody(req);
      const param = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined);
      if (!ctx.tokens.clientMatches(param('client_id'), param('client_secret'))) {
        res.status(400).json(GRANT_FAILURES.bad_client());
        return;
      }
      if (!ctx.tokens.revokeRefreshToken(param('token'))) {
        res.status(400).json(GRANT_FAILURES.bad_refresh_token());
        return;
      }
      res.status(204).end();
    });

    // Uninstalled by the app itself: every OAuth token of the portal stops working.
    app.delete(paths.externalInstall, ...api(ctx, 'appinstalls.uninstall', ['oauth']), (_req, res) => {
      ctx.tokens.uninstall();
      res.status(204).end();
    });

    // ---- account and properties -------------------------------------------------------------------------------

    app.get(paths.accountDetails, ...api(ctx, 'account.details', []), (_req, res) => {
      res.json({
        portalId: Number(ctx.portalId),
        accountType: ctx.accountType.value,
        timeZone: ctx.timeZone.value,
        companyCurrency: 'EUR',
        additionalCurrencies: [],
        ...utcOffsetOf(ctx.timeZone.value),
        uiDomain: 'app.hubspot.com',
        dataHostingLocation: 'eu1',
      });
    });

    app.post(
      paths.companyPropertyGroups,
      ...api(ctx, 'properties.groups.create', [SCHEMA_WRITE]),
      json,
      (req, res) => {
        const result = ctx.store.createGroup(objectBody(req));
        if (result === 'exists') {
          res
            .status(409)
            .json(
              crmError(
                'OBJECT_ALREADY_EXISTS',
                `A property group named '${String(objectBody(req).name)}' already exists.`,
              ),
            );
        } else if (typeof result === 'string') {
          res.status(400).json(crmError('VALIDATION_ERROR', result));
        } else {
          res.status(201).json({ ...result, archived: false });
        }
      },
    );

    app.post(paths.companyProperties, ...api(ctx, 'properties.create', [SCHEMA_WRITE]), json, (req, res) => {
      const body = objectBody(req);
      const result = ctx.store.createProperty(body);
      if (result === 'exists') {
        res
          .status(409)
          .json(crmError('OBJECT_ALREADY_EXISTS', `Property named '${String(body.name)}' already exists.`));
      } else if (typeof result === 'string') {
        res.status(400).json(crmError('VALIDATION_ERROR', result));
      } else {
        res.status(201).json(result);
      }
    });

    app.get(
      `${paths.companyProperties}/:name`,
      ...api(ctx, 'properties.read', { anyOf: [READ, WRITE, SCHEMA_READ] }),
      (req, res) => {
        const property = ctx.store.properties.get(String(req.params.name));
        if (!property) {
          res
            .status(404)
            .json(crmError('OBJECT_NOT_FOUND', `Unable to find property ${String(req.params.name)}`));
          return;
        }
        res.json(property);
      },
    );

    app.patch(
      `${paths.companyProperties}/:name`,
      ...api(ctx, 'properties.update', [SCHEMA_WRITE]),
      json,
      (req, res) => {
        const result = ctx.store.updateProperty(String(req.params.name), objectBody(req));
        if (result === 'not_found') {
          res
            .status(404)
            .json(crmError('OBJECT_NOT_FOUND', `Unable to find property ${String(req.params.name)}`));
        } else if (typeof result === 'string') {
          res.status(400).json(crmError('VALIDATION_ERROR', result));
        } else {
          res.json(result);
        }
      },
    );

    // ---- companies --------------------------------------------------------------------------------------------

    app.get(paths.companies, ...api(ctx, 'companies.list', [READ]), (req, res) => {
      const limit = Math.min(Number(req.query.limit ?? 10) || 10, HUBSPOT_SIZES.pageSize);
      const after = typeof req.query.after === 'string' ? Number(req.query.after) : 0;
      const properties = requestedProperties(req.query.properties);
      const live = ctx.store.live().filter((c) => Number(c.id) >= after);
      const page = live.slice(0, limit);
      const next = live[limit];
      res.json({
        results: page.map((c) => ctx.store.toObject(c, properties)),
        ...(next
          ? { paging: { next: { after: next.id, link: `${paths.companies}?after=${next.id}` } } }
          : {}),
      });
    });

    app.post(paths.companiesBatchRead, ...api(ctx, 'companies.batchRead', [READ]), json, (req, res) => {
      const startedAt = new Date().toISOString();
      const body = objectBody(req);
      const ids = inputIds(body);
      if (!ids || ids.length > HUBSPOT_SIZES.batchRead) {
        res
          .status(400)
          .json(
            crmError('VALIDATION_ERROR', `inputs must be a list of at most ${HUBSPOT_SIZES.batchRead} ids`),
          );
        return;
      }
      if (!Array.isArray(body.propertiesWithHistory)) {
        // Required by HubSpot's published spec for this endpoint.
        res.status(400).json(crmError('VALIDATION_ERROR', 'propertiesWithHistory is required'));
        return;
      }
      const properties = requestedProperties(body.properties);
      const results = new Map<string, unknown>();
      const missing: string[] = [];
      for (const id of ids) {
        const company = ctx.store.resolve(id);
        if (company) results.set(company.id, ctx.store.toObject(company, properties));
        else missing.push(id);
      }
      batchAnswer(res, [...results.values()], missing, startedAt);
    });

    app.post(paths.companiesBatchUpdate, ...api(ctx, 'companies.batchUpdate', [WRITE]), json, (req, res) => {
      const startedAt = new Date().toISOString();
      const body = objectBody(req);
      const ids = inputIds(body);
      if (!ids || ids.length > HUBSPOT_SIZES.batchUpdate) {
        res
          .status(400)
          .json(
            crmError(
              'VALIDATION_ERROR',
              `inputs must be a list of at most ${HUBSPOT_SIZES.batchUpdate} records`,
            ),
          );
        return;
      }
      const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
      if (duplicates.length > 0) {
        res
          .status(400)
          .json(
            crmError(
              'VALIDATION_ERROR',
              `Duplicate IDs found in batch input: [${[...new Set(duplicates)].join(', ')}]`,
            ),
          );
        return;
      }
      const inputs = body.inputs as { id: unknown; properties?: unknown }[];
      const planned: { company: StoredCompany; values: Map<string, string> }[] = [];
      const missing: string[] = [];
      const refused: ErrorBody[] = [];
      for (const input of inputs) {
        const properties =
          typeof input.properties === 'object' && input.properties !== null
            ? (input.properties as Record<string, unknown>)
            : {};
        const { normalized, invalid } = ctx.store.validate(properties);
        if (invalid.length > 0) {
          // HubSpot refuses the whole batch when a value is invalid.
          res.status(400).json(invalidPropertiesBody(invalid));
          return;
        }
        const company = ctx.store.resolve(String(input.id));
        if (!company) {
          missing.push(String(input.id));
          continue;
        }
        const required = validates
          ? ctx.store.missingRequired(company, normalized, ctx.requiredProperties)
          : [];
        if (required.length > 0) refused.push(recordValidationError(String(input.id), required));
        else planned.push({ company, values: normalized });
      }
      ctx.store.writes.batches++;
      ctx.store.batchSizes.push(planned.length);
      const results = new Map<string, unknown>();
      for (const { company, values } of planned) {
        const changed = ctx.store.apply(company, values, 'api');
        ctx.store.writes.records++;
        ctx.store.writes.propertyWrites += values.size;
        if (!changed) ctx.store.writes.unchangedRecords++;
        results.set(company.id, ctx.store.toObject(company, [...values.keys()]));
      }
      batchAnswer(res, [...results.values()], missing, startedAt, refused);
    });

    // Association labels v4 (2026-03): the note -> company types, HubSpot's own unlabeled one among them.
    app.get(
      paths.noteCompanyLabels,
      ...api(ctx, 'associations.labels', { anyOf: [READ, WRITE, NOTES_WRITE] }),
      (_req, res) => {
        res.json({
          results: [
            { category: 'HUBSPOT_DEFINED', typeId: ctx.noteToCompanyTypeId.value, label: null },
            { category: 'USER_DEFINED', typeId: 4001, label: 'Mentioned in' },
          ],
        });
      },
    );

    app.post(paths.notes, ...api(ctx, 'notes.create', [NOTES_WRITE]), json, (req, res) => {
      const body = objectBody(req);
      const properties = (body.properties ?? {}) as Record<string, unknown>;
      const associations = Array.isArray(body.associations) ? (body.associations as unknown[]) : [];
      const companyIds = associations.flatMap((a) => {
        const to = (a as { to?: { id?: unknown } }).to;
        const types = (a as { types?: { associationTypeId?: unknown }[] }).types ?? [];
        return to && types.some((t) => t.associationTypeId === ctx.noteToCompanyTypeId.value)
          ? [String(to.id)]
          : [];
      });
      if (typeof properties.hs_timestamp !== 'string' && typeof properties.hs_timestamp !== 'number') {
        res.status(400).json(crmError('VALIDATION_ERROR', 'hs_timestamp is required'));
        return;
      }
      const missing = companyIds.filter((id) => !ctx.store.resolve(id));
      if (missing.length > 0) {
        res.status(400).json(crmError('VALIDATION_ERROR', `no company ${missing.join(', ')} to associate`));
        return;
      }
      const note = ctx.store.addNote({
        body: typeof properties.hs_note_body === 'string' ? properties.hs_note_body : '',
        timestamp: String(properties.hs_timestamp),
        companyIds,
      });
      res
        .status(201)
        .json({ id: note.id, properties: { hs_note_body: note.body, hs_timestamp: note.timestamp } });
    });

    app.post(paths.companiesSearch, ...api(ctx, 'companies.search', [READ], 'search'), json, (req, res) => {
      const body = objectBody(req);
      const limit = Math.min(Number(body.limit ?? 10) || 10, HUBSPOT_SIZES.searchPageSize);
      const offset = Number(body.after ?? 0) || 0;
      if (offset + limit > HUBSPOT_SIZES.searchMaxResults) {
        res.status(400).json(crmError('VALIDATION_ERROR', 'Search results are limited to 10000 records'));
        return;
      }
      const matcher = searchMatcher(ctx.store, body.filterGroups);
      if (typeof matcher === 'string') {
        res.status(400).json(crmError('VALIDATION_ERROR', matcher));
        return;
      }
      // The 2026-03 search spec marks `sorts` (property names) required, beside filterGroups, properties, limit.
      const sorts = body.sorts;
      if (!Array.isArray(sorts) || !sorts.every((s) => typeof s === 'string')) {
        res.status(400).json(crmError('VALIDATION_ERROR', 'sorts is required: a list of property names'));
        return;
      }
      const matches = ctx.store.live().filter(matcher);
      const page = matches.slice(offset, offset + limit);
      const properties = requestedProperties(body.properties);
      const nextOffset = offset + limit;
      res.json({
        total: matches.length,
        results: page.map((c) => ctx.store.toObject(c, properties)),
        ...(nextOffset < matches.length ? { paging: { next: { after: String(nextOffset) } } } : {}),
      });
    });
  }

  // ---- Webhooks journal (2026-03) ------------------------------------------------------------------------------

  const JOURNAL_READ = 'developer.webhooks_journal.read';
  const JOURNAL_SUBSCRIBE = 'developer.webhooks_journal.subscriptions.write';
  // A subscription to company events also needs the companies' own read scope, as HubSpot's journal guide says.
  const COMPANIES_READ = 'crm.objects.companies.read';
  const journalBase = '/webhooks-journal/journal-local/2026-03';
  const fetchResponse = (req: Request, entries: { offset: string; at: number }[]) => {
    const origin = `${req.protocol}://${req.get('host')}`;
    const now = new Date().toISOString();
    return {
      status: 'COMPLETE',
      results: entries.map((e) => ({
        currentOffset: e.offset,
        expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
        url: `${origin}/local-journal-files/${e.offset}`,
      })),
      startedAt: now,
      completedAt: now,
    };
  };
  const journalPortal = (req: Request, res: Response): boolean => {
    const portal = req.query.installPortalId;
    if (portal !== undefined && portal !== ctx.portalId) {
      res
        .status(400)
        .json(crmError('VALIDATION_ERROR', `the app is not installed in portal ${String(portal)}`));
      return false;
    }
    return true;
  };
  const journalCount = (req: Request): number => Math.min(Math.max(Number(req.params.count) || 1, 1), 1000);

  app.post(
    '/webhooks-journal/subscriptions/2026-03',
    ...api(ctx, 'journal.subscribe', [JOURNAL_SUBSCRIBE, COMPANIES_READ]),
    json,
    (req, res) => {
      const body = objectBody(req);
      const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
      if (body.subscriptionType !== 'OBJECT' || String(body.portalId) !== ctx.portalId) {
        res
          .status(400)
          .json(crmError('VALIDATION_ERROR', 'an OBJECT subscription for this portal is expected'));
        return;
      }
      ctx.journal.subscribe(ctx.portalId, list(body.actions), list(body.properties));
      const now = new Date().toISOString();
      res.json({
        id: 1,
        appId: 1_234_567,
        subscriptionType: 'OBJECT',
        objectTypeId: String(body.objectTypeId),
        portalId: Number(ctx.portalId),
        actions: list(body.actions),
        properties: list(body.properties),
        createdAt: now,
        updatedAt: now,
      });
    },
  );
  app.get(`${journalBase}/batch/latest/:count`, ...api(ctx, 'journal.latest', [JOURNAL_READ]), (req, res) => {
    if (journalPortal(req, res)) res.json(fetchResponse(req, ctx.journal.latest(journalCount(req))));
  });
  app.get(
    `${journalBase}/batch/earliest/:count`,
    ...api(ctx, 'journal.earliest', [JOURNAL_READ]),
    (req, res) => {
      if (journalPortal(req, res)) res.json(fetchResponse(req, ctx.journal.earliest(journalCount(req))));
    },
  );
  app.get(
    `${journalBase}/batch/:offset/next/:count`,
    ...api(ctx, 'journal.next', [JOURNAL_READ]),
    (req, res) => {
      if (!journalPortal(req, res)) return;
      const entries = ctx.journal.after(String(req.params.offset), journalCount(req));
      if (entries === null) {
        res.status(404).json(crmError('OBJECT_NOT_FOUND', 'the offset has expired or does not exist'));
        return;
      }
      res.json(fetchResponse(req, entries));
    },
  );
  // The journal's files sit behind short-lived URLs of their own (no bearer token).
  app.get('/local-journal-files/:offset', count(ctx, 'journal.file'), (req, res) => {
    const events = ctx.journal.file(String(req.params.offset));
    if (!events) {
      res.status(404).json({ message: 'expired' });
      return;
    }
    res.json(events);
  });

  // The numbered API versions: HubSpot stops supporting them; the connector must never call them.
  app.use((req, res, next) => {
    if (!/\/v[1-4]\//.test(req.path)) {
      next();
      return;
    }
    ctx.calls.legacy = (ctx.calls.legacy ?? 0) + 1;
    res.status(404).json(notFoundPathBody(req.path));
  });

  // Malformed JSON and other parser failures in HubSpot's error shape.
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
    if (res.headersSent) {
      next(err);
      return;
    }
    res
      .status(status >= 400 && status < 500 ? status : 500)
      .json(
        crmError(
          status < 500 ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR',
          err instanceof Error ? err.message : 'error',
        ),
      );
  });

  return app;
}

/** `utcOffset` / `utcOffsetMilliseconds` of the zone now, as account details report them. */
function utcOffsetOf(timeZone: string): { utcOffset: string; utcOffsetMilliseconds: number } {
  const name =
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(new Date())
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const match = /([+-])(\d{2}):(\d{2})/.exec(name);
  if (!match) return { utcOffset: '+00:00', utcOffsetMilliseconds: 0 };
  const sign = match[1] === '-' ? -1 : 1;
  const ms = sign * (Number(match[2]) * 60 + Number(match[3])) * 60_000;
  return { utcOffset: `${match[1]}${match[2]}:${match[3]}`, utcOffsetMilliseconds: ms };
}

/** A value's tokens as HubSpot's search splits them, roughly: words between spaces and punctuation. */
function tokensOf(value: string): string[] {
  return value.split(/[^\p{L}\p{N}]+/u).filter((t) => t !== '');
}

/** CONTAINS_TOKEN's value: one token, case-insensitive, with `*` standing for any characters. */
function tokenPattern(value: string): RegExp {
  const source = value
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 'iu');
}

/** OR of filter groups, AND of filters; EQ, NEQ, HAS_PROPERTY, NOT_HAS_PROPERTY and CONTAINS_TOKEN. */
function searchMatcher(store: LocalCompanyStore, raw: unknown): ((c: StoredCompany) => boolean) | string {
  if (raw === undefined) return () => true;
  if (!Array.isArray(raw) || raw.length > 5) return 'filterGroups must be a list of at most 5 groups';
  const groups: ((c: StoredCompany) => boolean)[] = [];
  for (const group of raw) {
    const filters = (group as { filters?: unknown }).filters;
    if (!Array.isArray(filters) || filters.length > 6) return 'each filter group needs at most 6 filters';
    const checks: ((c: StoredCompany) => boolean)[] = [];
    for (const f of filters as Record<string, unknown>[]) {
      const name = String(f.propertyName);
      const value = f.value === undefined ? undefined : String(f.value);
      switch (f.operator) {
        case 'EQ':
          checks.push((c) => store.valueOf(c, name) === value);
          break;
        case 'NEQ':
          checks.push((c) => store.valueOf(c, name) !== value);
          break;
        case 'HAS_PROPERTY':
          checks.push((c) => store.valueOf(c, name) !== '');
          break;
        case 'NOT_HAS_PROPERTY':
          checks.push((c) => store.valueOf(c, name) === '');
          break;
        case 'CONTAINS_TOKEN': {
          const token = tokenPattern(value ?? '');
          checks.push((c) => tokensOf(store.valueOf(c, name)).some((t) => token.test(t)));
          break;
        }
        default:
          return `operator ${String(f.operator)} is not supported by the local HubSpot`;
      }
    }
    groups.push((c) => checks.every((check) => check(c)));
  }
  return (c) => groups.length === 0 || groups.some((g) => g(c));
}
