import type { ReconcileJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';

/**
 * `reconcile`: the scheduled sweep over every connected installation (Pipeline.reconcileAll), or the delayed
 * check of one installation a sweep skipped (Pipeline.reconcileInstallation).
 */
export async function reconcile(p: Pipeline, data: ReconcileJob = {}): Promise<void> {
  if (data.installationId === undefined) {
    await p.reconcileAll();
    return;
  }
  const installation = await p.deps.installations.get(data.installationId);
  if (installation?.status === 'connected') await p.reconcileInstallation(data.installationId);
}
