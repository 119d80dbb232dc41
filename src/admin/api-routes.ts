import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import { providers } from '../providers.js';
import type { AdminActions } from './admin-actions.js';
import { addEventRoutes, addInstallationRoutes } from './api/installations.js';
import type { ApiKit } from './api/kit.js';
import { addLinkRoutes } from './api/links.js';
import { addRequestRoutes } from './api/requests.js';
import { addReviewRoutes } from './api/review.js';
import { addKeyAndSyncRoutes, addSwitchRoutes } from './api/settings.js';
import { AdminRequestError } from './errors.js';
import type { AdminGuard } from './guard.js';
import { bodyError } from './http-errors.js';
import type { AdminOverview } from './overview.js';

/**
 * The admin JSON API, mounted at /admin/api.
 *
 * Authentication: `Authorization: Bearer <ADMIN_TOKEN>`, or the admin page's session cookie. With the cookie,
 * POST and DELETE also need the session's CSRF token in `x-csrf-token` (or a `_csrf` body field); bearer
 * requests need none. Missing or wrong credentials: 401. Missing or wrong CSRF token: 403.
 * Errors are `{"error": "<sentence>", "code": "<CODE>", ...details}`: 400 bad input (`BAD_REQUEST`,
 * `BAD_JSON`, `NOT_A_CANDIDATE`), 404 unknown installation (`INSTALLATION_NOT_FOUND`), 409 installation not in
 * a state to do it, 422 refused by the report service, 502 refused by the CRM or the service.
 *
 * GET    /admin/api/installations
 *        -> {installations: [InstallationView]}: connection {state, reason, reconnectUrl, reconnectHint},
 *           apiUsage {summary, used?, limit?} | null, reportKey {source, sandbox, checkedAt, problem},
 *           reportRate {keyId, perMinute, ceilingPerMinute (null: no cap), burstMs, learnt, phase, limitPerMinute,
 *           sentPerMinute, changedAt, lastCut {at, reason}, statedQuota {perMinute, windowMs}, keptUntil} | null
 *           (the key's learnt rate, as stored in Redis),
 *           coverage {counts: {matched, needs_review, no_match, not_published, error}, total},
 *           scores {count, buckets: [{from, to, count}]}, reviewCount, sharedLinkConflicts [{slug, differs,
 *           records: [{recordId, domain, country}]}] (auto links that disagree; domain and country read from
 *           the CRM), sharedLinkPlacesProblem (why they are null: the CRM could not be read) | null,
 *           lastRun (RunSummary | null).
 * GET    /admin/api/installations/:id                 -> InstallationView
 * GET    /admin/api/installations/:id/review
 *        -> {items: [{recordId, name, country, industry, at,
 *                     candidates: [{slug, name, industry, stage, geography, score, why}]}]}
 * GET    /admin/api/installations/:id/review.csv     -> text/csv, one row per candidate (review-queue.csv)
 * POST   /admin/api/installations/:id/review/bulk    body {action: "accept-first" | "reject", recordIds: [..]}
 *        (1-1000) -> {action, done, results: [{recordId, outcome, slug, status}]}; outcome `linked`,
 *        `rejected`, `not_in_review`, `no_candidates`, `tied` (nothing puts the first candidate ahead of the next: never
 *        accepted in bulk) or `failed`, and massId (the mass action kept for its undo). Written through the
 *        batch path before the answer; each record decided goes to the decision log. `?dryRun=1` answers
 *        {dryRun: true, count, sample: [{recordId, name, from, to}] (the first 20), leftAlone: {reason: n},
 *        confirm} and changes nothing; a body `confirm` from it applies the decision only to that same set
 *        (409 SET_CHANGED with the new `preview` when it changed). The same for both undo routes below.
 * GET    /admin/api/installations/:id/decisions?limit=100 (1-1000)
 *        -> {decisions: [{id, at, action, bulk, recordId, slug, by: {kind, id, name?}, evidence}]}, newest first;
 *        `name` is a named admin's (ADMIN_TOKENS); evidence.massId names the mass action a decision was part of;
 *        kind `admin-session`, `admin-token`, `crm-user` or `crm`
 * GET    /admin/api/installations/:id/decisions.csv  -> text/csv, every decision kept (decisions.csv)
 * POST   /admin/api/installations/:id/records/:recordId/unlink  -> {recordId, status}: no_match by the admin
 * POST   /admin/api/installations/:id/records/:recordId/rematch -> {recordId, status, slug}: a person's or
 *        admin's no_match lifted, the record matched again at once
 * POST   /admin/api/installations/:id/runs/:runId/undo  body {confirm?} -> {runId, unlinked, kept, massId}: the
 *        run's auto-links taken back, except on records a person or an admin decided about since the run
 *        started; `?dryRun=1` as for bulk review. 404 RUN_NOT_FOUND.
 * GET    /admin/api/installations/:id/mass-actions -> {massActions: [{id, kind, at, by, runId?, undoes?, done,
 *        kept, undoneBy?}]}: undone runs, bulk decisions and undos of those, newest first (kept 30 days)
 * POST   /admin/api/installations/:id/mass-actions/:massId/undo  body {confirm?} -> {massId, undid, restored,
 *        kept}: every record gets back the link and source it had before, except records decided about since;
 *        `?dryRun=1` as above. 404 MASS_ACTION_NOT_FOUND, 409 ALREADY_UNDONE.
 * POST   /admin/api/installations/:id/review/:recordId  body {action: "accept", slug} (one of the candidates),
 *        {action: "set", slug} (any published report) or {action: "reject"} (every candidate)
 *        -> {recordId, action, slug, status}; written to the CRM before the answer. 404 NOT_IN_REVIEW when the
 *        record is not waiting for review; 422 REPORTS_NOT_FOUND when no published report has that slug.
 * POST   /admin/api/installations/:id/key             body {apiKey}
 * DELETE /admin/api/installations/:id/key             back to the server's key (REPORTS_API_KEY)
 *        -> {sandbox, resumedRunId}; checked with `me { sandbox }` first, stored encrypted. A refused key:
 *        422 REPORT_KEY_REFUSED with keyStatus 401 or 403 and an explanation; nothing is stored.
 * POST   /admin/api/installations/:id/sync            body {full?: boolean}
 *        -> 202 {runId, kind: "full" | "incremental"}; 409 when the installation is not connected.
 * GET    /admin/api/installations/:id/runs            -> {runs: [RunSummary]} (newest first, up to 20)
 * Each provider's own admin routes (its `adminApi`, such as OAuth connections per org or group of orgs and
 *        their install links) under /admin/api/<kind>/...; see connectors/<crm>/ and docs/http-api.md.
 * GET    /admin/api/events?limit=50  (1-500)
 *        -> {events: [{id, source, type, slug, receivedAt, outcome, detail}]}, newest first
 * POST   /admin/api/installations/:id/approve         -> {approved, runId}: a pending OAuth installation is let in
 *        (fields, polling, first backfill); 409 NOT_PENDING when it was not waiting.
 * DELETE /admin/api/installations/:id                 -> {removed, revocation}; the CRM access revoked, then jobs,
 *                                                        tokens, key and index deleted here (even when the CRM cannot be reached).
 * POST   /admin/api/installations/:id/records/:recordId/request
 *        body {} (JSON) or multipart/form-data with an optional file part `document`
 *        -> 202 {submissionId, existing, state, requestedAt, document}: the submission is made at the service and
 *        the record shows `requested`; `existing: true` when the record already waited (that request is
 *        returned, nothing is sent). 422 REPORTS_WRITE_SCOPE_MISSING {missingScope: "write"} when the key cannot
 *        write (nothing is stored, the record is unchanged); 404 REQUEST_RECORD_NOT_FOUND; 409
 *        REQUEST_RECORD_LINKED; 422 REQUEST_RECORD_UNNAMED; 400 REQUEST_DOCUMENT_INVALID (empty, over 10 MB).
 * GET    /admin/api/installations/:id/requests
 *        -> {requests: [{recordId, submissionId, name, requestedAt, ageSeconds, document}]}: pending, oldest first
 * POST   /admin/api/installations/:id/alert-activity  body {on: boolean}
 *        -> {alertActivity}: alerts also become an activity (note, task) on each linked record
 * POST   /admin/api/installations/:id/fixture-writes  {allow: boolean}
 *        -> {allowFixtureWrites, runId}: a sandbox key may (or may no longer) write fixture scores into this
 *           production CRM; allowing starts a full sync
 */

export interface ApiRouteDeps {
  ctx: AppContext;
  guard: AdminGuard;
  actions: AdminActions;
  overview: AdminOverview;
}

/**
 * The API's checks (credentials, body parsers, CSRF), then each group of routes in api/, each CRM's own routes,
 * the unknown route and the error answer. The review group keeps the bulk decision before one record's.
 */
export function adminApiRouter({ ctx, guard, actions, overview }: ApiRouteDeps): Router {
  const router = Router();
  router.use(guard.requireApi);
  // A bulk decision names up to BULK_REVIEW_MAX record ids; every other body stays small.
  router.use('/installations/:id/review/bulk', express.json({ limit: '96kb' }));
  router.use(express.json({ limit: '16kb' }));
  router.use(
    guard.requireCsrf((_req, res) => {
      res.status(403).json({
        error: 'The CSRF token is missing or wrong: send x-csrf-token with the session.',
        code: 'CSRF_REJECTED',
      });
    }),
  );

  const kit: ApiKit = { ctx, actions, overview };
  addInstallationRoutes(router, kit);
  addReviewRoutes(router, kit);
  addLinkRoutes(router, kit);
  addKeyAndSyncRoutes(router, kit);
  addRequestRoutes(router, kit);
  addSwitchRoutes(router, kit);
  addEventRoutes(router, kit);

  // Each CRM's own admin routes (its provider's `adminApi`).
  for (const provider of providers) {
    if (provider.adminApi) router.use(provider.adminApi(ctx.config, ctx.stores.provider));
  }

  router.use((req, res) => {
    res
      .status(404)
      .json({ error: `There is no admin API route ${req.method} ${req.originalUrl}.`, code: 'NOT_FOUND' });
  });

  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const known = err instanceof AdminRequestError ? err : bodyError(err);
    if (!known) return next(err);
    res.status(known.status).json({ error: known.message, code: known.code, ...known.details });
  });
  return router;
}
