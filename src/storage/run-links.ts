import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * The auto-links each sync run made, so that a run that linked wrongly can be undone in one step. Kept for
 * as long as a run is worth undoing; the CRM record (its slug and `report_link_source`) decides at undo time
 * whether a link is still the run's.
 */
const KEEP_SECONDS = 30 * 24 * 3600;

/** Written only while the installation exists (run-links-add.lua). */
const ADD_IF_INSTALLED = LuaScript.load('run-links-add');
const addIfInstalledReply = z.enum(['added', 'gone']);

export class RunLinks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Keeps nothing once the installation is removed (see ADD_IF_INSTALLED). */
  async add(installationId: string, runId: string, links: Map<string, string>): Promise<void> {
    if (links.size === 0) return;
    await ADD_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.runLinks(installationId, runId)],
      [KEEP_SECONDS, ...[...links].flat()],
      addIfInstalledReply,
    );
  }

  /**
   * record id -> slug of several runs (a later run's link of a record wins), in pages of at most `size` records
   * (HSCAN), so a run of a hundred thousand links is read and worked on a page at a time. Only the record ids
   * given so far are kept, to give each record once.
   */
  async *pagesOfRuns(
    installationId: string,
    runIds: readonly string[],
    size: number,
  ): AsyncGenerator<Map<string, string>> {
    const given = new Set<string>();
    let page = new Map<string, string>();
    // Newest first: `runIds` lists a run before the runs it superseded, and a record's first link found wins.
    for (const runId of runIds) {
      const key = this.keys.runLinks(installationId, runId);
      let cursor = '0';
      do {
        const [next, flat] = await this.redis.hscan(key, cursor, 'COUNT', size);
        cursor = next;
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const recordId = flat[i]!;
          if (given.has(recordId)) continue;
          given.add(recordId);
          page.set(recordId, flat[i + 1]!);
          if (page.size >= size) {
            yield page;
            page = new Map();
          }
        }
      } while (cursor !== '0');
    }
    if (page.size > 0) yield page;
  }

  /** record id -> slug */
  async linksOf(installationId: string, runId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.runLinks(installationId, runId))));
  }
}
