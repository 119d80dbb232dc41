import type { InstallationStore } from './store.js';

/** What start-up did to one installation that had no recorded approval. */
export interface ApprovalUpgrade {
  installationId: string;
  outcome: 'recorded_before' | 'kept_pending';
}

/**
 * Being let in is recorded on the installation (`approvedBy`); deployments from before that record it carry
 * none. At start-up (every process kind, since the job gate reads the record), an installation that runs today,
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
