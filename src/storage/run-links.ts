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

  /** record id -> slug, of several runs (a later run's link of a record wins). */
  async linksOfRuns(installationId: string, runIds: readonly string[]): Promise<Map<string, string>> {
    const all = new Map<string, string>();
    // Oldest first: `runIds` lists a run before the runs it superseded.
    for (const runId of [...runIds].reverse()) {
      for (const [recordId, slug] of await this.linksOf(installationId, runId)) all.set(recordId, slug);
    }
    return all;
  }

  /** record id -> slug */
  async linksOf(installationId: string, runId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.runLinks(installationId, runId))));
  }
}
