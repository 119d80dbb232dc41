import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';

/**
 * Report requests: the only module that reads or writes them. One entry per record (its latest request) and
 * an index from submission id to record per report-service key, so `report.completed` naming a submission
 * finds the record that waits for it. Submission ids are the service's, one space per account: two accounts'
 * ids may be equal, so each key keeps its own, and an id found under more than one key resolves no request
 * (the event does not say whose it is; the report is still offered to every installation by name). The one
 * index of before (and requests that name no key) is still read. Everything is in Redis, so a request survives
 * any restart of the connector; removing an installation deletes its requests with its keys and its entries
 * in the indexes (`forgetInstallation`).
 */

export const REQUEST_STATES = ['pending', 'linked', 'review', 'cancelled'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

const iso = z.string();

export const reportRequestSchema = z.object({
  installationId: z.string(),
  recordId: z.string(),
  submissionId: z.string(),
  /** The report-service key it was made with (its identity): whose submission id space the id is in. */
  keyIdentity: z.string().optional(),
  state: z.enum(REQUEST_STATES),
  requestedAt: iso,
  resolvedAt: iso.optional(),
  /** The report the record was linked to when the request resolved. */
  slug: z.string().optional(),
  /** What was sent: the CRM's facts about the company. */
  sent: z.record(z.string(), z.string()),
  /** The service's answer to `POST /v1/submissions`, kept as it came. */
  answer: z.unknown(),
  document: z
    .object({
      filename: z.string(),
      size: z.number(),
      id: z.string().optional(),
      answer: z.unknown().optional(),
      /** Why the upload failed; the submission exists all the same. */
      error: z.string().optional(),
    })
    .optional(),
});
export type ReportRequest = z.infer<typeof reportRequestSchema>;

const submissionRefSchema = z.object({ installationId: z.string(), recordId: z.string() });

/** How long a request lock is held at most: a crashed holder frees it by itself. */
const LOCK_MS = 60_000;
/** Releases only the caller's own lock (locks-release.lua). */
const RELEASE_LOCK = LuaScript.load('locks-release');
const releaseLockReply = z.number();

function parse(raw: string | null | undefined): ReportRequest | null {
  if (!raw) return null;
  try {
    const parsed = reportRequestSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Whether a submission index entry belongs to `installationId` (an unreadable entry belongs to nobody). */
function refersTo(raw: string, installationId: string): boolean {
  try {
    const ref = submissionRefSchema.safeParse(JSON.parse(raw));
    return ref.success && ref.data.installationId === installationId;
  } catch {
    return false;
  }
}

export class RequestLockedError extends Error {
  readonly code = 'REQUEST_IN_PROGRESS';
  constructor(readonly recordId: string) {
    super(`a request for record ${recordId} is being made right now`);
    this.name = 'RequestLockedError';
  }
}

export class RequestStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async get(installationId: string, recordId: string): Promise<ReportRequest | null> {
    return parse(await this.redis.hget(this.keys.requests(installationId), recordId));
  }

  /** The record's request while it still waits for its report. */
  async pending(installationId: string, recordId: string): Promise<ReportRequest | null> {
    const request = await this.get(installationId, recordId);
    return request?.state === 'pending' ? request : null;
  }

  /** Which of these records wait for a requested report. */
  async pendingAmong(
    installationId: string,
    recordIds: readonly string[],
  ): Promise<Map<string, ReportRequest>> {
    const out = new Map<string, ReportRequest>();
    if (recordIds.length === 0) return out;
    const raw = await this.redis.hmget(this.keys.requests(installationId), ...recordIds);
    recordIds.forEach((recordId, i) => {
      const request = parse(raw[i]);
      if (request?.state === 'pending') out.set(recordId, request);
    });
    return out;
  }

  /** Every request of an installation, oldest first. */
  async list(installationId: string): Promise<ReportRequest[]> {
    const all = await this.redis.hvals(this.keys.requests(installationId));
    return all
      .flatMap((raw) => {
        const request = parse(raw);
        return request ? [request] : [];
      })
      .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  }

  /**
   * The pending or ended request whose submission this is: looked up under every key's index and the index of
   * before. Found under more than one (two accounts gave the same id), it is nobody's: null.
   */
  async bySubmission(submissionId: string): Promise<ReportRequest | null> {
    const identities = await this.redis.smembers(this.keys.requestSubmissionKeys());
    const indexes = [
      { key: this.keys.requestSubmissions(), identity: null },
      ...identities.map((identity) => ({ key: this.keys.requestSubmissionsOfKey(identity), identity })),
    ];
    const found: ReportRequest[] = [];
    for (const { key, identity } of indexes) {
      const request = await this.requestOf(await this.redis.hget(key, submissionId), submissionId);
      // An entry under a key counts only for a request made with that key.
      if (request && (identity === null || request.keyIdentity === identity)) found.push(request);
    }
    return found.length === 1 ? found[0]! : null;
  }

  /** The request an index entry names, while it is still the one for this submission. */
  private async requestOf(raw: string | null, submissionId: string): Promise<ReportRequest | null> {
    if (!raw) return null;
    let ref: z.infer<typeof submissionRefSchema>;
    try {
      const parsed = submissionRefSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return null;
      ref = parsed.data;
    } catch {
      return null;
    }
    const request = await this.get(ref.installationId, ref.recordId);
    // The record may have been requested again since: only the request for this submission counts.
    return request?.submissionId === submissionId ? request : null;
  }

  async save(request: ReportRequest): Promise<void> {
    const valid = reportRequestSchema.parse(request);
    const index =
      valid.keyIdentity === undefined
        ? this.keys.requestSubmissions()
        : this.keys.requestSubmissionsOfKey(valid.keyIdentity);
    // Separate commands (the installation's hash and the submission indexes lie in different slots on a
    // cluster). The index first: until the request itself is saved, `bySubmission` finds a request without this
    // submission id and answers null, as it does for an index entry nobody wrote.
    if (valid.keyIdentity !== undefined)
      await this.redis.sadd(this.keys.requestSubmissionKeys(), valid.keyIdentity);
    await this.redis.hset(
      index,
      valid.submissionId,
      JSON.stringify({ installationId: valid.installationId, recordId: valid.recordId }),
    );
    await this.redis.hset(this.keys.requests(valid.installationId), valid.recordId, JSON.stringify(valid));
  }

  /** Ends a pending request (linked, sent to review, or cancelled); a request already ended stays as it is. */
  async resolve(
    installationId: string,
    recordId: string,
    state: Exclude<RequestState, 'pending'>,
    slug?: string,
  ): Promise<ReportRequest | null> {
    const request = await this.pending(installationId, recordId);
    if (!request) return null;
    const resolved: ReportRequest = {
      ...request,
      state,
      resolvedAt: new Date().toISOString(),
      ...(slug ? { slug } : {}),
    };
    await this.redis.hset(this.keys.requests(installationId), recordId, JSON.stringify(resolved));
    return resolved;
  }

  /** Drops the requests of records that no longer exist. */
  async forget(installationId: string, recordIds: readonly string[]): Promise<void> {
    if (recordIds.length === 0) return;
    await this.redis.hdel(this.keys.requests(installationId), ...recordIds);
  }

  /**
   * Takes a removed installation out of the submission indexes: every submission of it, including those of
   * requests made again since (the installation's own hash keeps only each record's latest), so a late
   * `report.completed` for one of them finds nothing. Read in pages, so a large index never blocks Redis.
   */
  async forgetInstallation(installationId: string): Promise<void> {
    const identities = await this.redis.smembers(this.keys.requestSubmissionKeys());
    await this.forgetIn(this.keys.requestSubmissions(), installationId);
    for (const identity of identities)
      await this.forgetIn(this.keys.requestSubmissionsOfKey(identity), installationId);
  }

  private async forgetIn(key: string, installationId: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, 'COUNT', 500);
      cursor = next;
      const theirs: string[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        if (refersTo(flat[i + 1]!, installationId)) theirs.push(flat[i]!);
      }
      if (theirs.length > 0) await this.redis.hdel(key, ...theirs);
    } while (cursor !== '0');
  }

  /**
   * Runs `make` while no other request for the record is being made (two clicks, two admins): the second
   * caller gets RequestLockedError, then finds the first one's pending request.
   */
  async exclusive<T>(installationId: string, recordId: string, make: () => Promise<T>): Promise<T> {
    const key = this.keys.requestLock(installationId, recordId);
    const token = randomUUID();
    if ((await this.redis.set(key, token, 'PX', LOCK_MS, 'NX')) !== 'OK')
      throw new RequestLockedError(recordId);
    try {
      return await make();
    } finally {
      // Only our own lock is released; one that expired and was taken by another caller stays.
      await RELEASE_LOCK.run(this.redis, [key], [token], releaseLockReply);
    }
  }
}
