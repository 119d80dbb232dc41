import { createHash } from 'node:crypto';

/**
 * Every Redis key the connector uses, in one place; no other module builds one. Keys scoped to an installation
 * start with `${prefix}:inst:{${id}}:` so that removing an installation can delete them by pattern.
 *
 * Hash tags (the `{…}` part) decide a key's slot on a Redis Cluster: every key one Lua script or MULTI touches
 * carries the same tag. One installation's keys share its id as tag (its link state is written in one
 * transaction), so installations spread over the masters; one run's keys share the run id; one report key's
 * cache spreads over REPORT_CACHE_SHARDS tags (an entry and its fill lock share one); the inbound-event
 * keys (event log, duplicate marks, the score-change inbox) share `{inbox}`, since one script accepts an event
 * into all of them; each rate gate's two keys share its identity; each BullMQ queue has its own tagged prefix
 * (`queuePrefix`). Keys used only one at a time carry no tag. On one Redis tags change nothing.
 *
 * Each group has one owning module, the only one that reads or writes it (README, "Developing and testing"):
 * installations: installations/store.ts · per-record link state: storage/link-index.ts with the review queue
 * (storage/review-queue.ts), slug index (storage/slug-index.ts, storage/slug-fanout.ts) and poll cursors
 * (storage/poll-cursor.ts) it holds · runs and sync history: storage/runs.ts · links a run made:
 * storage/run-links.ts · what an undo's preview read: storage/undo-reads.ts · the report cache and report
 * sequence: pipeline/report-reader.ts, storage/slug-changes.ts,
 * storage/run-caches.ts (the run caches before it) · events:
 * storage/event-log.ts · record locks: storage/record-locks.ts · pending slug updates: pipeline/score-changes/pending-slugs.ts ·
 * OAuth state: auth/oauth-state.ts · refresh locks: auth/token-manager.ts · change stream leases:
 * app/change-streams.ts (taken and renewed), storage/change-stream-states.ts (read, and given back with the
 * stream's last state) · change stream states: storage/change-stream-states.ts · a provider's own records (`provider`):
 * connectors/<crm>/ · rate gates: ratelimit/redis-gate.ts · admin sessions and logins:
 * auth/session-revocations.ts, auth/login-throttle.ts · record card requests: a provider's card rate limit ·
 * report requests: requests/request-store.ts ·
 * alerts: alerts/alert-store.ts · decision log and touch marks: decisions/decision-log.ts · mass actions:
 * decisions/mass-actions.ts · schema version and its upgrade lock: migrations/runner.ts · the lanes' oldest
 * queued job: pipeline/liveness-watch.ts. BullMQ builds its own keys under the same prefix.
 */
export class Keys {
  constructor(readonly prefix: string) {}

  /** Every key of this deployment (test clean-up, `deleteKeysWithPrefix`). */
  everything(): string {
    return `${this.prefix}:*`;
  }

  // ---- BullMQ (pipeline/queues.ts, pipeline/workers.ts) -------------------------------------------------

  /**
   * BullMQ's prefix for one queue. Its scripts touch many keys of a queue at once, so a queue's keys share a
   * hash tag; each queue has its own, so the three queues can live on different masters.
   */
  queuePrefix(queue: string): string {
    return `${this.prefix}:${tag(queue)}`;
  }

  // ---- schema version (migrations/runner.ts) ----------------------------------------------------------

  /**
   * The deployment's schema version: the number of the last upgrade step of src/migrations that ran. Absent
   * on a deployment none ran on (new, or written by a release without them): every step runs. The lock shares
   * its tag, as one script checks the lock and raises the version.
   */
  schemaVersion(): string {
    return `${this.prefix}:${tag('schema')}:version`;
  }
  /** Held, with its holder's token, by the one process running upgrade steps. */
  schemaUpgradeLock(): string {
    return `${this.prefix}:${tag('schema')}:upgrade-lock`;
  }

  // ---- installations (installations/store.ts) ---------------------------------------------------------

  /** Hash of one installation: its fields and its sealed tokens and report-service key. */
  installation(id: string): string {
    return `${this.prefix}:installation:${tag(id)}`;
  }
  /** Set of every installation id. */
  installations(): string {
    return `${this.prefix}:installations`;
  }
  /** Stem of every key scoped to one installation: its id is the hash tag. */
  inst(id: string): string {
    return `${this.prefix}:inst:${tag(id)}`;
  }
  /** Pattern of every key scoped to one installation (deleted with it). */
  instPattern(id: string): string {
    return `${this.inst(id)}:*`;
  }

  // ---- a provider's own records (connectors/<crm>/, e.g. OAuth connections) ---------------------------

  /** A key a provider keeps for itself, under its kind: `<prefix>:<kind>:<parts...>`. */
  provider(kind: string, ...parts: string[]): string {
    return [this.prefix, kind, ...parts].join(':');
  }

  // ---- change stream leases (app/change-streams.ts) and states (storage/change-stream-states.ts) -------

  /** Which process holds an installation's change stream (its token, with a short expiry it renews). */
  changeStreamLease(id: string): string {
    return `${this.prefix}:change-stream:${tag(id)}`;
  }
  /**
   * Hash of where an installation's changes come from as its stream last said: `mode`, `detail`, `reason`,
   * `since`, `updated`. Under the installation's stem, so it goes with the installation.
   */
  changeStreamState(id: string): string {
    return `${this.inst(id)}:change-stream`;
  }

  // ---- refresh locks (auth/token-manager.ts) ----------------------------------------------------------

  refreshLock(id: string): string {
    return `${this.inst(id)}:refresh-lock`;
  }
  /** Set for a while after a failed refresh, so callers fail fast instead of hammering the CRM. */
  refreshCooldown(id: string): string {
    return `${this.inst(id)}:refresh-cooldown`;
  }

  // ---- per-record link state (storage/link-index.ts and the stores it holds; storage/linear-hash.ts) ---

  /**
   * Stem of the linear-hash map record id -> the record's packed state (`seq|slug|status|score|auto|fingerprint|
   * unlinked name`, record-state.ts). The stem itself is the map's meta hash (level, split pointer, count); its
   * buckets are `<stem>:<n>` and its values too long for a compact bucket live in `<stem>:big`. Buckets stay
   * small enough for Redis's listpack encoding, so a record costs its bytes, not a hash table entry per field.
   */
  recordStates(id: string): string {
    return `${this.inst(id)}:rec`;
  }
  /**
   * Hash of one installation's status counts (lua/lib/status-counts.lua): `b:<integer part of score>` -> how many
   * records with a status carry such a score, and `built` once the one-time build counted the states written
   * before the counts were kept.
   */
  statusCounts(id: string): string {
    return `${this.inst(id)}:counts`;
  }
  /**
   * Prefix of the per-status linear-hash maps record id -> '' (`<prefix>:<status code>`, the code as the packed
   * state has it): each map's size is the status's count, its buckets page the list of records in that status.
   */
  statusRecordsPrefix(id: string): string {
    return `${this.inst(id)}:st`;
  }
  /** Set of slug digests whose slug-index field lists two records or more (where records may share a report). */
  sharedSlugDigests(id: string): string {
    return `${this.inst(id)}:slug-shared`;
  }
  /**
   * Stem of the linear-hash map slug digest -> space-joined ids of the records linked to that slug. The digest
   * is a decimal number (slug-digest.ts), which a compact bucket keeps as an integer of 4 bytes.
   */
  slugRecords(id: string): string {
    return `${this.inst(id)}:slug-recs`;
  }
  /**
   * The same map when its digest was 8 hex digits (kept as a string of 8 bytes): rebuilt from the records' states
   * under `slugRecords` by the upgrade step migrations/003-link-index-bucketed.ts, then deleted.
   */
  legacySlugRecords(id: string): string {
    return `${this.inst(id)}:by-slug`;
  }
  /**
   * Stem of the linear-hash map record id -> the review item as a short string (review-codec.ts, `storeReview`), its
   * candidates named by a short reference into `reviewCandidates`; an item of up to 64 bytes is kept in a compact
   * bucket, a longer one in the map's `big` hash. Named anew with each format: `inst:{id}:review` (JSON) and
   * `inst:{id}:review-items` (candidates by slug) are not read any more (a full sync writes the items again).
   */
  review(id: string): string {
    return `${this.inst(id)}:reviews`;
  }
  /**
   * Hash reference -> compact JSON of a review candidate's report (slug, name, industry, stage, geography),
   * shared by every review item offering it, and `#reference` -> how many items do (the entry goes with the
   * last). The reference is a digest of the slug (lua/lib/review-items.lua).
   */
  reviewCandidates(id: string): string {
    return `${this.inst(id)}:review-cands`;
  }
  /** Hash record id -> JSON list of slugs a person rejected for that record (never offered again). */
  rejected(id: string): string {
    return `${this.inst(id)}:rejected`;
  }
  /**
   * The link index's keys before its bucketed storage (a hash per field, a set per slug), and the review items of
   * the formats before the present one: read by nobody, deleted by the upgrade step
   * migrations/003-link-index-bucketed.ts once the installation's full sync is queued.
   */
  legacyIndexKeys(id: string): string[] {
    return [
      'record-slug',
      'record-status',
      'record-score',
      'autolinks',
      'autolink-places',
      'review',
      'unlinked',
      'seen',
      'written-seq',
      'review-items',
      'review-cand',
    ].map((name) => `${this.inst(id)}:${name}`);
  }
  /**
   * The bucketed map record id -> `domain|country` of an auto-linked record (`inst:{id}:place`, its buckets
   * `place:<n>` and `place:big`), replaced by a digest of each in the record's state: read by nobody, deleted by
   * the start-up upgrade, whose full sync writes the digests.
   */
  legacyPlaceKeys(id: string): string[] {
    return [`${this.inst(id)}:place`, `${this.inst(id)}:place:0`, `${this.inst(id)}:place:big`];
  }
  /** Every key of that place map. */
  legacyPlacePattern(id: string): string {
    return `${this.inst(id)}:place*`;
  }
  /** The old per-slug record sets of one installation (`inst:{id}:slug:<slug>`). */
  legacySlugMembersPattern(id: string): string {
    return `${this.inst(id)}:slug:*`;
  }
  /** The old global fan-out, one set per slug. */
  legacySlugInstallationsPattern(): string {
    return `${this.prefix}:slug-installations:*`;
  }
  /** Held while one process upgrades an installation's index, so two starting at once queue one sync. */
  indexUpgradeLock(id: string): string {
    return `${this.inst(id)}:index-upgrade`;
  }

  /**
   * Hash stored slug -> space-joined record ids: records a run listed holding that slug in the CRM while the
   * index had them on no slug or another (storage/slug-index.ts, `addListed`). Kept a while after the last
   * listing: an event reaches them before their batch indexes them.
   */
  listedLinks(id: string): string {
    return `${this.inst(id)}:listed-links`;
  }

  /** Hash with the change poll's cursor, the time of its first poll and of its last pass (`polledAt`). */
  pollCursor(id: string): string {
    return `${this.inst(id)}:poll-cursor`;
  }
  /**
   * Stem of one shard of the global linear-hash map slug digest -> space-joined installation ids that have a
   * record on the slug (fan-out of score.changed). A fixed number of shards, each its own hash tag, so a small
   * deployment pays a few compact buckets instead of one key per slug, and a large one spreads over masters.
   */
  slugInstallationsShard(shard: number): string {
    return `${this.prefix}:${tag(`slug-fan-${shard}`)}`;
  }
  /**
   * A shard of that map when its digest was 8 hex digits: rebuilt under `slugInstallationsShard` from the
   * installations' records by the start-up upgrade, then deleted.
   */
  legacySlugInstallationsShard(shard: number): string {
    return `${this.prefix}:${tag(`slug-inst-${shard}`)}`;
  }
  /**
   * Hash of the fan-out's installation numbers: `i:<id>` -> number, `n:<number>` -> id, `#` the last number.
   * The shards list an installation by its number (a byte or two), not its id. Removal deletes an
   * installation's two entries; `#` only grows, so a number is never given twice.
   */
  slugInstallationNumbers(): string {
    return `${this.prefix}:${tag('slug-inst')}:numbers`;
  }

  // ---- reports whose records wait for an update (pipeline/score-changes/pending-slugs.ts) ----------------------------

  /** Sorted set slug -> mark number, per lane (`urgent`, `hot`): what the installation's slug-update takes. */
  pendingSlugs(id: string, lane: string): string {
    return `${this.inst(id)}:pending-slugs:${lane}`;
  }
  /** The installation's mark counter: a slug marked again gets a higher number. */
  pendingSlugSeq(id: string): string {
    return `${this.inst(id)}:pending-slugs:seq`;
  }
  /**
   * Sorted set slug -> when its oldest unfinished change arrived (ms), both lanes: the age of the oldest pending
   * update (metrics) and the event-to-CRM latency. Absent for marks made before it existed.
   */
  pendingSlugSince(id: string): string {
    return `${this.inst(id)}:pending-slugs:since`;
  }

  // ---- event-to-CRM latencies (storage/event-latency.ts) ---------------------------------------------

  /** Hash of one source's latency histogram: `le:<bound>` -> updates in that bucket, `count`, `sum` (seconds). */
  eventLatency(source: string): string {
    return `${this.prefix}:event-to-crm:${source}`;
  }

  /**
   * Hash lane (queue name) -> when its oldest waiting job was queued (ms; 0 when none waits), written by the
   * workers' liveness watch and read by `/metrics` (pipeline/liveness-watch.ts).
   */
  laneOldestQueued(): string {
    return `${this.prefix}:lane-oldest-queued`;
  }

  // ---- record locks (storage/record-locks.ts) --------------------------------------------------------

  recordLock(id: string, recordId: string): string {
    return `${this.inst(id)}:lock:${recordId}`;
  }

  /** Hash holder id -> Redis time (ms) until which that process's record locks count as held (lock-holder.ts). */
  recordLockHolders(id: string): string {
    return `${this.inst(id)}:lock-holders`;
  }

  // ---- links each run made (storage/run-links.ts) -----------------------------------------------------

  /** Hash record id -> slug of the auto-links one run made (what `undo` takes back). */
  runLinks(id: string, runId: string): string {
    return `${this.inst(id)}:run-links:${runId}`;
  }

  // ---- what an undo's preview read (storage/undo-reads.ts) ---------------------------------------------

  /**
   * Hash record id -> JSON of what the preview of a run's undo read of that record in the CRM, for the
   * confirmation of the set whose digest is `confirm`; kept minutes (UNDO_READ_SECONDS).
   */
  undoRead(id: string, confirm: string): string {
    return `${this.inst(id)}:undo-read:${confirm}`;
  }

  // ---- runs and sync history (storage/runs.ts) -------------------------------------------------------

  /** List of an installation's recent run ids, newest first. */
  runs(id: string): string {
    return `${this.inst(id)}:runs`;
  }
  /**
   * Hash of the runs under way on an installation, one per lane (`sync`, `preview`): what a sync asked for
   * joins (storage/active-runs.ts). In the installation's slot, beside its hash.
   */
  activeRuns(id: string): string {
    return `${this.inst(id)}:active-runs`;
  }
  /** Hash of one run; every key of the run starts with it (the run id is their hash tag). */
  run(runId: string): string {
    return `${this.prefix}:run:${tag(runId)}`;
  }
  runBatches(runId: string): string {
    return `${this.run(runId)}:batches`;
  }
  /**
   * Set of the runs under way (listing or processing), all installations: what the workers' liveness watch
   * looks at (pipeline/liveness-watch.ts). Runs started by older code are not in it.
   */
  runsUnderWay(): string {
    return `${this.prefix}:runs-under-way`;
  }
  /** Pattern of every key of one run, its caches included. */
  runPattern(runId: string): string {
    return `${this.run(runId)}*`;
  }

  // ---- run caches before the report cache (storage/run-caches.ts deletes them; nothing reads them) ------

  /** Set of a run's cached reports and searches, as older releases wrote them: dropped with the run. */
  runCached(runId: string): string {
    return `${this.run(runId)}:cached`;
  }

  // ---- the report cache and the report sequence (pipeline/report-reader.ts, storage/report-cache.ts) -----

  /**
   * A report read (200 or 404) as the key `keyId` was answered, shared by every run and job reading with that
   * key. Tagged by the key and one of REPORT_CACHE_SHARDS buckets of the slug: an entry and its fill lock share
   * a slot, and one key's cache spreads over the cluster instead of filling one slot.
   */
  reportCached(keyId: string, slug: string): string {
    return `${this.reportCacheStem(keyId, slug)}:r:${slug}`;
  }
  /** Held by the one worker filling `reportCached(keyId, slug)`. */
  reportCacheFill(keyId: string, slug: string): string {
    return `${this.reportCached(keyId, slug)}:fill`;
  }
  /** Search results of query `q` with `limit`, for the key `keyId` (hashed: queries are free text). */
  searchCached(keyId: string, q: string, limit: number): string {
    const qHash = createHash('sha256').update(`${limit} ${q}`).digest('hex').slice(0, 24);
    return `${this.reportCacheStem(keyId, qHash)}:s:${qHash}`;
  }
  /** Held by the one worker filling `searchCached(keyId, q, limit)`. */
  searchCacheFill(keyId: string, q: string, limit: number): string {
    return `${this.searchCached(keyId, q, limit)}:fill`;
  }
  /** Pattern of every report-cache key (the memory bench, clean-up). */
  reportCachePattern(): string {
    return `${this.prefix}:rcache:*`;
  }
  private reportCacheStem(keyId: string, name: string): string {
    const bucket = createHash('sha256').update(name).digest().readUInt16BE(0) % REPORT_CACHE_SHARDS;
    return `${this.prefix}:rcache:${tag(`${keyId}.${bucket}`)}`;
  }
  reportSeq(): string {
    return `${this.prefix}:report-seq`;
  }
  /** score.changed events of one slug in the current heat window (written by the inbox's accept script). */
  slugHeat(slug: string): string {
    return `${this.inbox()}:slug-heat:${slug}`;
  }

  /** Hash slug -> report sequence number taken when the service last said the report changed. */
  slugChanges(): string {
    return `${this.prefix}:slug-changes`;
  }

  // ---- rate gates (ratelimit/redis-gate.ts builds on these stems with gateKeys) -----------------------

  crmGate(id: string): string {
    return `${this.inst(id)}:gate`;
  }
  reportsGate(keyIdentity: string): string {
    return `${this.prefix}:reports-gate:${tag(keyIdentity)}`;
  }

  /** Stem of the keys the score-change accept script touches together: events, their marks, the inbox. */
  private inbox(): string {
    return `${this.prefix}:{inbox}`;
  }

  // ---- score changes waiting to be fanned out (pipeline/score-changes/inbox.ts) --------------------------

  /** Hash slug -> id of the latest score.changed not yet fanned out. */
  scoreInbox(): string {
    return `${this.inbox()}:score-inbox`;
  }
  /** Sorted set slug -> events since it was last taken: the fan-out takes the fewest first. */
  scoreInboxOrder(): string {
    return `${this.inbox()}:score-inbox:order`;
  }
  /** Hash slug -> event id taken by the fan-out and not yet done (a killed fan-out's leftovers). */
  scoreInboxDraining(): string {
    return `${this.inbox()}:score-inbox:draining`;
  }
  /** Set while a fan-out is queued or running, so an ingest adds the fan-out job only when none is. */
  scoreInboxKick(): string {
    return `${this.inbox()}:score-inbox:kick`;
  }
  /** Sorted set slug -> when its oldest event not yet taken was accepted (ms): the inbox's age, for metrics. */
  scoreInboxSince(): string {
    return `${this.inbox()}:score-inbox:since`;
  }
  /** Hash slug -> when the event the fan-out took was accepted (ms), until its fan-out is done. */
  scoreInboxDrainingSince(): string {
    return `${this.inbox()}:score-inbox:draining-since`;
  }
  /**
   * Sorted set slug -> when accepted (ms): slugs marked by an event while not hot (single changes), which the
   * fan-out takes between its takes of the whole inbox.
   */
  scoreInboxSingles(): string {
    return `${this.inbox()}:score-inbox:singles`;
  }
  /** Hash slug -> the lane its latest event was accepted in ('hot' or 'urgent'), until the mark is taken. */
  scoreInboxLane(): string {
    return `${this.inbox()}:score-inbox:lane`;
  }
  /** Hash slug -> the lane of the mark the fan-out took, until its fan-out is done. */
  scoreInboxDrainingLane(): string {
    return `${this.inbox()}:score-inbox:draining-lane`;
  }
  /** Set while the slug was hot within the last two heat windows (see ScoreChangeInbox.isHot). */
  slugWasHot(slug: string): string {
    return `${this.inbox()}:slug-was-hot:${slug}`;
  }

  // ---- events (storage/event-log.ts) -----------------------------------------------------------------

  events(): string {
    return `${this.inbox()}:events`;
  }
  eventSeen(source: string, eventId: string): string {
    return `${this.inbox()}:event-seen:${source}:${eventId}`;
  }

  // ---- admin (auth/login-throttle.ts, auth/session-revocations.ts) ----------------------------------

  adminLoginFailures(client: string): string {
    return `${this.prefix}:admin:login-failures:${client}`;
  }
  /** Sorted set of the clients with a failure counter of their own (its size is capped). */
  adminLoginClients(): string {
    return `${this.prefix}:admin:login-clients`;
  }
  /** Sorted set of the address blocks of one level (1: /24 and /48, 2: /16 and /32) with a counter of their own. */
  adminLoginBlocks(level: number): string {
    return `${this.prefix}:admin:login-blocks:${level}`;
  }
  adminRevokedSession(sessionId: string): string {
    return `${this.prefix}:admin:revoked-session:${sessionId}`;
  }

  // ---- record card requests (a provider's record card rate limit, connectors/<crm>/) ----------------------

  /** Count of one CRM account's card requests in the current minute (expires with the window). */
  cardRequests(crm: string, accountId: string): string {
    return `${this.prefix}:cards:${crm}:${accountId}`;
  }

  // ---- report requests (requests/request-store.ts) ----------------------------------------------------

  /** Hash record id -> JSON of the latest report request made for that record. */
  requests(id: string): string {
    return `${this.inst(id)}:requests`;
  }
  /**
   * Hash submission id -> JSON {installationId, recordId}: which record a `report.completed` answers. Written
   * before submissions were kept per report-service key (and for requests that name no key); still read.
   */
  requestSubmissions(): string {
    return `${this.prefix}:request-submissions`;
  }
  /** The same, for the submissions made with one report-service key (its identity, reports/key-identity.ts). */
  requestSubmissionsOfKey(keyIdentity: string): string {
    return `${this.prefix}:request-submissions:k:${keyIdentity}`;
  }
  /** Set of the key identities that have a submission index of their own. */
  requestSubmissionKeys(): string {
    return `${this.prefix}:request-submission-keys`;
  }
  /** Held while one request for a record is being made, so two clicks make one submission. */
  requestLock(id: string, recordId: string): string {
    return `${this.inst(id)}:request-lock:${recordId}`;
  }

  // ---- decision log (decisions/decision-log.ts) ---------------------------------------------------------

  /** Stream of who decided what about records' links, capped (DECISION_LOG_SIZE); deleted with the installation. */
  decisions(id: string): string {
    return `${this.inst(id)}:decisions`;
  }
  /** Hash record id -> stream id of the record's latest decision by a person or an admin (what undo spares). */
  touchMarks(id: string): string {
    return `${this.inst(id)}:touched`;
  }

  // ---- mass actions (decisions/mass-actions.ts) -----------------------------------------------------------

  /** JSON of one mass action (an undone run, a bulk review decision, an undo of one) but its records. */
  massAction(id: string, massId: string): string {
    return `${this.inst(id)}:mass:${massId}`;
  }
  /** List of JSON arrays of one mass action's records, MASS_RECORDS_PER_VALUE each (before 2026-11-27, in massAction). */
  massActionRecords(id: string, massId: string): string {
    return `${this.inst(id)}:mass:${massId}:records`;
  }
  /** List of an installation's recent mass action ids, newest first. */
  massActions(id: string): string {
    return `${this.inst(id)}:mass-list`;
  }

  // ---- alerts (alerts/alert-store.ts) -----------------------------------------------------------------

  /** Hash slug -> JSON of the latest `alert.fired` for that report ({line, at, eventId}). */
  slugAlerts(): string {
    return `${this.prefix}:slug-alerts`;
  }
  /** Set of record ids that already got the activity (note, Task) for one alert event. */
  alertActivities(id: string, eventId: string): string {
    return `${this.inst(id)}:alert-activities:${eventId}`;
  }
  /**
   * Hash installation id -> JSON of what the activity job did for one alert event (created, failed, skipped),
   * for the event log.
   */
  alertOutcomes(eventId: string): string {
    return `${this.prefix}:alert-outcomes:${eventId}`;
  }
}

/** A hash tag: on a Redis Cluster, keys with the same tag live in the same slot. */
/** Hash tags one report key's cache spreads over (Keys.reportCached): at least 16, so never one slot. */
export const REPORT_CACHE_SHARDS = 64;

function tag(value: string): string {
  return `{${value}}`;
}

/**
 * The keys of one rate gate, from its stem (`Keys.crmGate`, `Keys.reportsGate`, or a test's own): the GCRA's
 * arrival time, the pause a 429 sets, the rate an adaptive gate has learnt, the mark urgent callers set while
 * they wait (hot and deferrable callers hold back meanwhile) and the mark hot callers set while they wait
 * (deferrable callers hold back meanwhile). One stem, so that a script touching them all stays in one Redis
 * Cluster slot when the stem carries a hash tag.
 */
export function gateKeys(stem: string): {
  tat: string;
  pause: string;
  rate: string;
  urgent: string;
  hot: string;
  held: string;
} {
  return {
    tat: `${stem}:tat`,
    pause: `${stem}:pause`,
    rate: `${stem}:rate`,
    urgent: `${stem}:urgent`,
    hot: `${stem}:hot`,
    held: `${stem}:held`,
  };
}
