/**
 * Upgrades from: deployments written before 2026-11-26 12:13 UTC, whose installations carry no recorded
 * approval (`approvedBy`): being let in was read from the status then.
 * Can go when: every deployment is at schema version 2 or more. Without it, an installation of such a
 * deployment that runs today counts as never let in: its jobs stop, "waiting for approval", until an admin approves it.
 */
import type { InstallationStore } from '../installations/store.js';
import type { MigrationStep } from './step.js';

/** What start-up did to one installation that had no recorded approval. */
export interface ApprovalUpgrade {
  installationId: string;
  outcome: 'recorded_before' | 'kept_pending';
}

/**
 * Being let in is recorded on the installation (`approvedBy`); deployments from before that record it carry
 * none. Before any worker starts (the job gate reads the record), an installation that runs today,
 * connected or stopped only for its report key, and every token-mode one, is recorded as let in by
 * `recorded_before`. An OAuth installation without the record that is pending or disconnected is one nobody can
 * be shown to have approved: it is kept pending, so it offers "approve", never "reconnect".
 * Idempotent: a second process finds every installation recorded.
 */
export async function recordApprovalsBefore(store: InstallationStore): Promise<ApprovalUpgrade[]> {
  const done: ApprovalUpgrade[] = [];
  for (const installation of await store.list()) {
    if (installation.approvedBy) continue;
    const running = installation.status === 'connected' || installation.status === 'key_invalid';
    if (installation.mode === 'token' || running) {
      if (await store.recordLetInBefore(installation.id)) {
        done.push({ installationId: installation.id, outcome: 'recorded_before' });
      }
    } else if (installation.status !== 'pending') {
      await store.setStatus(installation.id, 'pending', installation.statusReason ?? '');
      done.push({ installationId: installation.id, outcome: 'kept_pending' });
    }
  }
  return done;
}

export const step: MigrationStep = {
  version: 2,
  name: 'approvals recorded on installations from before they were kept',
  run: async (ctx) => {
    const done = await recordApprovalsBefore(ctx.installations);
    return {
      recordedBefore: done.filter((d) => d.outcome === 'recorded_before').length,
      keptPending: done.filter((d) => d.outcome === 'kept_pending').length,
    };
  },
};
